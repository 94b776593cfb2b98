import Foundation
import LifelineTestKit
import Testing

/// The daemon end to end: real process, real files, real signals.
@Suite(.serialized) struct DaemonTests {
    func config(_ net: ScriptedNetwork, down: String = "300ms", up: String = "200ms", extra: String = "") -> String {
        """
        [debounce]
        down = "\(down)"
        up = "\(up)"

        \(net.monitorTOML)

        [[sink]]
        kind = "log"
        \(extra)
        """
    }

    func status(_ f: DaemonFixture) throws -> (code: Int32, json: [String: Any]) {
        let r = try f.cli(["status", "--json"])
        let json = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
        return (r.status, json)
    }

    @Test func execMonitorDrivesTheLogAndStatus() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(config(net))
        try f.start()
        defer { f.stopNow() }

        try net.say("online", interface: "eth0", reason: "probe answered", rtt: 12)
        await f.waitForLogged(["online"])
        var s = try status(f)
        #expect(s.code == 0)
        #expect(s.json["state"] as? String == "online")
        #expect(s.json["interface"] as? String == "eth0")
        #expect(s.json["rtt_ms"] as? Double == 12)

        // A flap shorter than the down window: nothing is published. Both lines in
        // one write, so the flap's length is the test's choice, not the machine's pace.
        try net.say(line: Array("{\"state\":\"offline\",\"reason\":\"blip\"}\n".utf8)
                    + Array("{\"state\":\"online\",\"interface\":\"eth0\",\"reason\":\"probe answered\"}\n".utf8))
        try await Task.sleep(for: .milliseconds(600))  // not a readiness wait: twice the down window, in which nothing may come
        #expect(f.loggedStates() == ["online"])

        try net.say("offline", reason: "cable pulled")
        await f.waitForLogged(["online", "offline"])
        s = try status(f)
        #expect(s.code == 1)
        #expect(s.json["state"] as? String == "offline")
        #expect(s.json["previous"] as? String == "online")
        #expect(s.json["reason"] as? String == "cable pulled")

        try net.raw("this is not json")
        try net.say("portal", interface: "eth0", reason: "redirected to http://login.example/")
        await f.waitForLogged(["online", "offline", "portal"])
        try net.say("online", interface: "eth0", reason: "probe answered")
        await f.waitForLogged(["online", "offline", "portal", "online"])

        let events = f.loggedEvents()
        #expect(events.compactMap { $0["sequence"] as? Int } == [1, 2, 3, 4])
        #expect(events.compactMap { $0["previous"] as? String } == ["unknown", "online", "offline", "portal"])
        #expect(f.daemonLog.contains("line 5 dropped: not a JSON object: this is not json"))

        let formatted = try f.cli(["status", "--format", "{icon} {state} on {interface}"])
        #expect(formatted.stdout == "● online on eth0\n")

        let history = try f.cli(["history"])
        #expect(history.status == 0)
        #expect(history.stdout.contains("offline  cable pulled"), "\(history.stdout)")

        #expect(await f.stop() == 0)
        // No daemon, no state: status says so and exits 3.
        #expect(!FileManager.default.fileExists(atPath: f.stateFilePath))
        let after = try f.cli(["status"])
        #expect(after.status == 3)
        #expect(after.stderr.contains("no daemon running"))
    }

    @Test func startupDoesNotAlertAndStartupOfflineNeedsTheDownWindow() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try net.say("offline", reason: "no route")
        try f.writeConfig(config(net, down: "3s"))
        let started = ContinuousClock.now
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: f.stateFilePath) }
        // Before the down window has passed the state is still unknown. Asked
        // later than that (a machine that paused us), the answer may be offline.
        let early = try status(f).json["state"] as? String
        if ContinuousClock.now - started < .seconds(3) { #expect(early == "unknown") }
        await f.waitForLogged(["offline"])
        #expect(ContinuousClock.now - started >= .seconds(3), "published before the down window")
        #expect(f.loggedEvents().first?["previous"] as? String == "unknown")
    }

    @Test func badConfigExitsTwoNamingFileLineAndKey() async throws {
        let f = try DaemonFixture()
        try f.writeConfig("""
            [debounce]
            down = "soon"
            """)
        try f.start()
        #expect(await f.stop(signal: 0) == 2)
        #expect(f.daemonLog.contains("\(f.configPath):2: 'debounce.down': 'soon' is not a duration"), "\(f.daemonLog)")

        let check = try f.cli(["config", "check"])
        #expect(check.status == 2)
        #expect(check.stderr.contains("config.toml:2: 'debounce.down'"))
    }

    @Test func configCheckAndShow() throws {
        let f = try DaemonFixture()
        let good = try f.cli(["config", "check"])
        #expect(good.status == 0)
        #expect(good.stdout.contains("(defaults): ok"))
        let shown = try f.cli(["config", "show"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("[debounce]\ndown = \"2s\"\nup = \"1s\""))
        try shown.stdout.write(toFile: f.path("shown.toml"), atomically: true, encoding: .utf8)
        #expect(try f.cli(["config", "check", f.path("shown.toml")]).status == 0)
    }

    @Test func sighupReloadsAGoodConfigAndKeepsTheOldOneOnABadOne() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(config(net))
        try f.start()
        defer { f.stopNow() }
        try net.say("online", interface: "eth0")
        await f.waitForLogged(["online"])
        let pid = try #require(f.process?.pid)

        try f.writeConfig("[debounce]\ndown = 5\n")
        kill(pid, SIGHUP)
        await Harness.waitUntil("reload refused") { f.daemonLog.contains("SIGHUP: keeping the running config") }
        #expect(f.daemonLog.contains("'debounce.down': expected a string, found an integer"))
        // Still running the old config: the monitor still drives the state.
        try net.say("limited", interface: "eth0")
        await f.waitForLogged(["online", "limited"])

        // A good config: a second log file appears and the state carries on.
        let second = f.path("second.jsonl")
        try f.writeConfig(config(net, extra: "\n[[sink]]\nkind = \"log\"\npath = \"\(second)\"\n"))
        kill(pid, SIGHUP)
        await Harness.waitUntil("reloaded") { f.daemonLog.contains("SIGHUP: reloaded") }
        try net.say("online", interface: "eth0")
        await Harness.waitUntil("online logged in both") {
            f.loggedStates() == ["online", "limited", "online"]
                && ((try? String(contentsOfFile: second, encoding: .utf8)) ?? "").contains("\"sequence\":3")
        }
        #expect(f.process?.isRunning == true)
    }

    @Test func aMonitorThatExitsIsRestartedWithBackoff() async throws {
        let f = try DaemonFixture()
        let script = try f.writeScript("once.sh", """
            #!/bin/sh
            echo '{"state":"online","interface":"eth0"}'
            exit 3
            """)
        try f.writeConfig("""
            [[monitor]]
            kind = "exec"
            command = ["\(script)"]
            [[sink]]
            kind = "log"
            """)
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil(timeout: .seconds(8), "restarted twice") {
            f.daemonLog.components(separatedBy: "restarting in").count >= 3
        }
        #expect(f.daemonLog.contains("once.sh exited with status 3; restarting in 1s"))
        #expect(f.daemonLog.contains("restarting in 2s"))
        #expect(f.loggedStates() == ["online"])
    }

    @Test func sigintStopsCleanly() async throws {
        let f = try DaemonFixture()
        try f.start()
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: f.stateFilePath) }
        let mode = try FileManager.default.attributesOfItem(atPath: f.stateFilePath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let status = await f.stop(signal: SIGINT)
        #expect(status == 0, "the daemon's output:\n\(f.daemonLog)")
    }

    /// The first probe loads libcurl and its TLS library on a thread of its
    /// own: here because the fixture's proxy variables send every request
    /// through libcurl, outside tests for an `https://` check or a proxy. A
    /// daemon stopped right then must still end with 0: ending it with exit(3)
    /// tore those libraries down under that thread, and one stop in thirty to
    /// a hundred ended in a segmentation fault. Stopped as soon as its log
    /// shows the probe starting, 150 times, so that the old crash shows.
    @Test func stoppingAsTheFirstProbeStartsEndsCleanly() async throws {
        for attempt in 1...150 {
            let f = try DaemonFixture()
            try f.start()
            defer { f.stopNow() }
            let probing = await eventually(every: .milliseconds(1)) { f.daemonLog.contains("probing (") }
            #expect(probing, "no probe started: \(f.daemonLog)")
            let status = await f.stop(signal: SIGTERM)
            #expect(status == 0, "stop \(attempt) ended with \(status.map(String.init) ?? "a timeout"):\n\(f.daemonLog)")
            if status != 0 || !probing { return }
        }
    }
}

@Suite struct PrivateFilesTests {
    @Test func aRuntimeFolderOthersCanWriteIsRefused() async throws {
        let f = try DaemonFixture()
        let folder = f.path("run/lifeline")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o777)  // as if someone else had prepared it for us
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("refusal logged") { f.daemonLog.contains("refusing to keep private files in") }
        #expect(!FileManager.default.fileExists(atPath: f.stateFilePath))
        #expect(f.process?.isRunning == true)
    }
}
