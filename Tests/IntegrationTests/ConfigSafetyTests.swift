import Foundation
import Testing

/// Config files that used to crash `config check`, the daemon at start, and the
/// running daemon on SIGHUP: durations too large to compute, and TOML that makes
/// the parser abort. Each is now an error naming file (line, key) and exit 2,
/// and a reload keeps the running daemon and its config.
@Suite(.serialized) struct ConfigSafetyTests {
    struct Bad: CustomTestStringConvertible, Sendable {
        var name: String
        var toml: String
        /// The start of the error, after "lifeline: "; FILE stands for the config's path.
        var expected: String
        var testDescription: String { name }

        func expected(in f: DaemonFixture) -> String {
            expected.replacingOccurrences(of: "FILE", with: f.configPath)
        }
    }

    static let cases: [Bad] = [
        Bad(name: "days beyond any duration", toml: "[debounce]\ndown = \"2000000000000000d\"\n", expected:
            "FILE:2: 'debounce.down': '2000000000000000d' is too long a duration (at most 36500d)"),
        Bad(name: "seconds beyond Int128", toml: "[[monitor]]\nkind = \"probe\"\ntimeout = \"170141183460469231732s\"\n", expected:
            "FILE:3: 'monitor #1 (probe).timeout': '170141183460469231732s' is too long a duration (at most 36500d)"),
        Bad(name: "a bracket and an ampersand", toml: "[debounce]\ndown = \"2s\"\n[&\n", expected:
            "FILE:3: the TOML parser failed on this line"),
        Bad(name: "an array header with an ampersand", toml: "[[&\n", expected:
            "FILE:1: the TOML parser failed on this line"),
    ]

    @Test(arguments: cases)
    func configCheckRefusesItWithExitTwo(_ bad: Bad) throws {
        let f = try DaemonFixture()
        try f.writeConfig(bad.toml)
        let check = try f.cli(["config", "check", f.configPath])
        #expect(check.status == 2, "\(check)")
        #expect(check.stderr.hasPrefix("lifeline: " + bad.expected(in: f)), "\(check.stderr)")
        #expect(check.stderr.split(separator: "\n").count == 1, "one line, no crash report: \(check.stderr)")
        // `config show` and the default file location go through the same loader.
        let show = try f.cli(["config", "show"])
        #expect(show.status == 2, "\(show)")
    }

    @Test(arguments: cases)
    func daemonStartRefusesItWithExitTwo(_ bad: Bad) async throws {
        let f = try DaemonFixture()
        try f.writeConfig(bad.toml)
        try f.start()
        #expect(await f.stop(signal: 0) == 2)
        #expect(f.daemonLog.contains("bad config: " + bad.expected(in: f)), "\(f.daemonLog)")
    }

    @Test(arguments: cases)
    func sighupKeepsTheRunningDaemonAndItsConfig(_ bad: Bad) async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        let good = """
            [debounce]
            down = "200ms"
            up = "100ms"

            \(net.monitorTOML)

            [[sink]]
            kind = "log"
            """
        try f.writeConfig(good)
        try f.start()
        defer { f.stopNow() }
        try net.say("online", interface: "eth0")
        await f.waitForLogged(["online"])
        let pid = try #require(f.process?.pid)

        try f.writeConfig(bad.toml)
        kill(pid, SIGHUP)
        await Harness.waitUntil("reload refused") { f.daemonLog.contains("SIGHUP: keeping the running config") }
        #expect(f.daemonLog.contains("SIGHUP: keeping the running config: " + bad.expected(in: f)),
                "\(f.daemonLog)")
        // Still alive, still on the old config: its monitor still drives the log.
        try net.say("limited", interface: "eth0")
        await f.waitForLogged(["online", "limited"])
        #expect(f.process?.isRunning == true)
        #expect(await f.stop() == 0)
    }

    @Test func aSyntaxErrorFoundByTheChildKeepsItsLine() throws {
        let f = try DaemonFixture()
        try f.writeConfig("[debounce]\ndown = \"2s\nup = \"1s\"\n")
        let check = try f.cli(["config", "check"])
        #expect(check.status == 2)
        #expect(check.stderr.hasPrefix("lifeline: \(f.configPath):2: Error while parsing string"), "\(check.stderr)")
    }

    @Test func durationFlagsRefuseHugeValuesOnOneLine() throws {
        let f = try DaemonFixture()
        for (arguments, flag) in [(["check", "--timeout", "999999999999999999999s"], "--timeout"),
                                  (["history", "--since", "170141183460469231732s"], "--since")] {
            let r = try f.cli(arguments)
            #expect(r.status == 64, "\(arguments): \(r)")
            #expect(r.stderr == "lifeline: \(flag): '\(arguments[2])' is too long a duration (at most 36500d)\n", "\(r.stderr)")
        }
    }
}
