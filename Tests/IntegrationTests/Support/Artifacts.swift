import Foundation
import Testing

/// Pictures the tests take, kept under the repository's `artifacts/`.
enum Artifacts {
    /// `artifacts/`, made if missing.
    static func createdFolder() throws -> URL {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("artifacts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The whole X screen `display`, as `artifacts/<name>`.
    static func screenshot(display: String, named name: String, environment: [String: String]? = nil) throws -> URL {
        let file = try createdFolder().appendingPathComponent(name)
        let r = try Harness.run(["import", "-display", display, "-window", "root", file.path], environment: environment)
        #expect(r.status == 0, "import failed: \(r.stderr)")
        return file
    }
}
