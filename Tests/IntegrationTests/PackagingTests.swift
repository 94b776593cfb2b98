import Foundation
import Testing

/// The files under packaging/ stay true to the binary they ship with.
@Suite struct PackagingTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func read(_ path: String) throws -> String {
        try String(contentsOf: Self.repo.appendingPathComponent(path), encoding: .utf8)
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionsMatchTheCLI(shell: String) throws {
        let generated = try Harness.run([Harness.binary, "--generate-completion-script", shell])
        #expect(generated.status == 0)
        let committed = try read("packaging/completions/lifeline.\(shell)")
        #expect(generated.stdout == committed,
                "packaging/completions/lifeline.\(shell) is stale: regenerate with `lifeline --generate-completion-script \(shell)`")
    }

    @Test func manPageNamesEverySubcommand() throws {
        let help = try Harness.run([Harness.binary, "--help"]).stdout
        let page = try read("packaging/man/lifeline.1")
        let section = help.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        var subcommands: [String] = []
        // Subcommand lines are indented by two spaces; wrapped help text by more.
        for line in section.split(separator: "\n") where line.hasPrefix("  ") && !line.hasPrefix("   ") {
            guard let word = line.split(separator: " ").first.map(String.init) else { continue }
            if word != "See", word != "help" { subcommands.append(word) }
        }
        #expect(!subcommands.isEmpty)
        for sub in subcommands {
            #expect(page.contains(".B \(sub)") || page.contains(".B lifeline \(sub)"), "lifeline(1) does not document '\(sub)'")
        }
    }

    /// Started with the graphical session, ready once it owns its bus name, reloaded by SIGHUP.
    @Test func systemdUnitRunsTheDaemonWithTheSession() throws {
        let unit = try read("packaging/systemd/lifeline.service")
        for line in ["Type=dbus", "BusName=org.lifeline.Lifeline1", "ExecStart=/usr/bin/lifeline daemon",
                     "ExecReload=kill -HUP $MAINPID", "PartOf=graphical-session.target",
                     "WantedBy=graphical-session.target", "Documentation=man:lifeline(1)"] {
            #expect(unit.contains(line), "lifeline.service lacks \(line)")
        }
    }
}
