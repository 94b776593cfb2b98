import Foundation
import Testing

/// lifeline(1) describes only commands the binary has: every command in its
/// SYNOPSIS and COMMANDS is a subcommand `lifeline --help` lists. (The other
/// direction, every subcommand documented, is PackagingTests'.)
@Suite struct ManPageCommandTests {
    @Test func everyDocumentedCommandExists() throws {
        let help = try Harness.run([Harness.binary, "--help"]).stdout
        let listed = Set((help.components(separatedBy: "SUBCOMMANDS:").last ?? "").split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(listed.contains("daemon"), "could not read the subcommands from --help")

        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: repo.appendingPathComponent("packaging/man/lifeline.1"), encoding: .utf8)
        var documented: [String] = []
        var section = ""
        var previous = ""
        for line in page.split(separator: "\n").map(String.init) {
            if line.hasPrefix(".SH ") { section = String(line.dropFirst(4)) }
            if section == "SYNOPSIS", line.hasPrefix(".B lifeline ") {
                documented.append(String(line.dropFirst(".B lifeline ".count).prefix { $0 != " " }))
            }
            if section == "COMMANDS", previous == ".TP", line.hasPrefix(".B ") {
                documented.append(String(line.dropFirst(3).prefix { $0 != " " }))
            }
            previous = line
        }
        #expect(documented.count >= listed.count)
        for command in documented {
            #expect(listed.contains(command), "lifeline(1) documents '\(command)', which `lifeline --help` does not list")
        }
    }
}
