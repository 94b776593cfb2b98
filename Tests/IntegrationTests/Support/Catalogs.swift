import Foundation
import LifelineTestKit
import Testing

/// The translations of po/, compiled with msgfmt for one test, and the
/// environment that makes a program speak one of them.
struct Catalogs {
    let directory: String

    /// Compiles every po/<language>.po into `<folder>/<language>/LC_MESSAGES/lifeline.mo`.
    init(in folder: String) throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        directory = folder + "/locale"
        let files = try FileManager.default.contentsOfDirectory(atPath: repo + "/po").filter { $0.hasSuffix(".po") }
        for file in files {
            let language = String(file.dropLast(3))
            let out = "\(directory)/\(language)/LC_MESSAGES"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let r = try Harness.run(["msgfmt", "--check", "--output-file=\(out)/lifeline.mo", "\(repo)/po/\(file)"])
            #expect(r.status == 0, "msgfmt \(file): \(r.stderr)")
        }
    }

    /// `LANGUAGE` picks the language; glibc reads it only when the locale is not
    /// plain "C", and C.UTF-8 is the one locale every Debian system has.
    func environment(_ language: String) -> [String: String] {
        ["LANGUAGE": language, "LC_ALL": "C.UTF-8", "LIFELINE_LOCALEDIR": directory]
    }
}

extension Desktop {
    /// dunst with its packaged settings but `font`: the packaged "Monospace 8"
    /// draws Persian letters unjoined (DejaVu Sans Mono has the glyphs, not the
    /// joining), where a Persian desktop sets a proportional font. Stop it with `stop()`.
    func startDunst(font: String, configFolder: String) async throws -> Spawned {
        await Harness.waitUntil("Xvfb on \(display)") {
            (try? Harness.run(["xwininfo", "-root", "-display", self.display]).status) == 0
        }
        let packaged = try String(contentsOfFile: "/etc/xdg/dunst/dunstrc", encoding: .utf8)
        let config = packaged.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.trimmingCharacters(in: .whitespaces).hasPrefix("font =") ? "    font = \(font)" : String(line)
        }.joined(separator: "\n")
        try FileManager.default.createDirectory(atPath: configFolder, withIntermediateDirectories: true)
        let path = configFolder + "/dunstrc"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let dunst = try Spawned(["dunst", "-config", path], environment: environment)
        await Harness.waitUntil("dunst on the bus") { (try? self.dunstctl(["is-paused"]).status) == 0 }
        return dunst
    }
}
