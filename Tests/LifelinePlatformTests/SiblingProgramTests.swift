import Foundation
import Testing

@testable import LifelinePlatform

/// A program missing beside the front binary is built by `swift run` only in
/// a SwiftPM build folder of this package.
@Suite struct SiblingProgramTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func aBuildFolderNamesItsPackageAndConfiguration() throws {
        let found = try #require(SiblingProgram.buildFolder(of: Self.package + "/.build/x86_64-unknown-linux-gnu/debug"))
        #expect(found.package == Self.package)
        #expect(found.configuration == "debug")
        #expect(SiblingProgram.buildFolder(of: Self.package + "/.build/release")?.configuration == "release")
    }

    @Test func anInstalledSystemIsNoBuildFolder() {
        #expect(SiblingProgram.buildFolder(of: "/usr/bin") == nil)
        #expect(SiblingProgram.buildFolder(of: "/usr/libexec/lifeline") == nil)
        // A folder named like one, with no package above it.
        #expect(SiblingProgram.buildFolder(of: "/tmp/.build/debug") == nil)
    }
}
