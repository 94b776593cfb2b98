import Foundation
import Testing

/// SIGHUP reloads change only what changed, and lose nothing published meanwhile.
@Suite struct ReloadTests {
    /// An exec monitor that counts its own starts, then relays what the test says.
    func countingMonitor(_ f: DaemonFixture) throws -> (toml: String, starts: String, net: ScriptedNetwork) {
        let starts = f.path("starts")
        let net = ScriptedNetwork(fixture: f)
        let script = try f.writeScript("counting.sh", """
            #!/bin/sh
            echo start >> '\(starts)'
            exec tail -n +1 -F '\(net.feed)'
            """)
        return ("[[monitor]]\nkind = \"exec\"\ncommand = [\"\(script)\"]\n", starts, net)
    }

    func startCount(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test func anUnchangedPluginKeepsRunningAcrossAReload() async throws {
        let f = try DaemonFixture()
        let monitor = try countingMonitor(f)
        try f.writeConfig(monitor.toml + "\n[[sink]]\nkind = \"log\"\n")
        try f.start()
        defer { f.stopNow() }
        try monitor.net.say("online", interface: "eth0")
        await f.waitForLogged(["online"])
        #expect(startCount(monitor.starts) == 1)
        let pid = try #require(f.process?.pid)

        // Another sink is added; the monitor and the log sink are unchanged.
        let second = f.path("second.jsonl")
        try f.writeConfig(monitor.toml + "\n[[sink]]\nkind = \"log\"\n\n[[sink]]\nkind = \"log\"\npath = \"\(second)\"\n")
        kill(pid, SIGHUP)
        await Harness.waitUntil("reloaded") { f.daemonLog.contains("SIGHUP: reloaded") }
        try monitor.net.say("limited", interface: "eth0")
        // The kept log saw only the new transition; the new one starts with it.
        await Harness.waitUntil("limited in both logs") {
            f.loggedStates() == ["online", "limited"]
                && ((try? String(contentsOfFile: second, encoding: .utf8)) ?? "").contains("\"state\":\"limited\"")
        }
        #expect(startCount(monitor.starts) == 1, "the unchanged monitor was restarted")
        #expect(f.process?.isRunning == true)
    }

    @Test func everyTransitionDuringReloadsReachesTheLog() async throws {
        let f = try DaemonFixture()
        // 300 transitions, one every 10 ms, with no debounce: each one is published.
        let storm = try f.writeScript("storm.sh", """
            #!/bin/sh
            i=0
            while [ $i -lt 150 ]; do
              echo '{"state":"online","interface":"eth0"}'
              sleep 0.01
              echo '{"state":"limited","interface":"eth0"}'
              sleep 0.01
              i=$((i+1))
            done
            exec sleep 600
            """)
        func config(keep: Int) -> String {
            """
            [debounce]
            down = "0s"
            up = "0s"

            [[monitor]]
            kind = "exec"
            command = ["\(storm)"]

            [[sink]]
            kind = "log"
            keep = \(keep)
            """
        }
        try f.writeConfig(config(keep: 5))
        try f.start()
        defer { f.stopNow() }
        let pid = try #require(f.process?.pid)
        await Harness.waitUntil("the storm started") { !f.loggedStates().isEmpty }
        // Ten reloads during the storm, each replacing the log sink (its settings change).
        for n in 0..<10 {
            try f.writeConfig(config(keep: 6 + n % 2))
            kill(pid, SIGHUP)
            try await Task.sleep(for: .milliseconds(250))
        }
        await Harness.waitUntil(timeout: .seconds(20), "the storm is over") {
            f.loggedEvents().count >= 300
        }
        let sequences = f.loggedEvents().compactMap { ($0["sequence"] as? NSNumber)?.intValue }
        #expect(sequences == Array(1...300), "gaps or repeats: \(sequences.count) lines")
        #expect(f.daemonLog.components(separatedBy: "SIGHUP: reloaded").count - 1 == 10)
    }
}
