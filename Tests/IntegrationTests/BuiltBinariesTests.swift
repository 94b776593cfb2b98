import Foundation
import Testing

/// The binaries a build leaves start and answer: the ones these tests run
/// (`swift build`), and the release ones `make release` (or `swift build -c
/// release`) made, when there are any. A link flag that makes a binary crash at
/// its first instruction shows here as a signal, not as a puzzling test elsewhere.
@Suite struct BuiltBinariesTests {
    static let names = ["lifeline", "lifeline-cli", "lifeline-daemon"]

    static func check(folder: String) throws {
        let box = try DaemonFixture()
        for name in names {
            let binary = folder + "/" + name
            let version = try Harness.run([binary, "--version"], environment: box.environment)
            #expect(version.status == 0, "\(binary) --version: status \(version.status) \(version.stderr)")
            #expect(version.stdout.split(separator: ".").count == 3, "\(binary) --version printed '\(version.stdout)'")
        }
        // No daemon runs in the fixture's folders: `status` says so (3), from the front binary's own code.
        let status = try Harness.run([folder + "/lifeline", "status"], environment: box.environment)
        #expect(status.status == 3, "\(folder)/lifeline status: status \(status.status) \(status.stderr)")
    }

    @Test func theBinariesTheTestsRunStart() throws {
        try Self.check(folder: URL(fileURLWithPath: Harness.binary).deletingLastPathComponent().path)
    }

    @Test func theReleaseBinariesStart() throws {
        let folder = PackagingTests.repo.appendingPathComponent(".build/release").path
        let built = Self.names.allSatisfy { FileManager.default.isExecutableFile(atPath: folder + "/" + $0) }
        try Harness.require(missing: built ? nil : "no release build in \(folder) (`make release`)")
        try Self.check(folder: folder)
    }
}
