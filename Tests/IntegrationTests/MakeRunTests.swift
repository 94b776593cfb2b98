import Foundation
import LifelineTestKit
import Testing

/// `make run` (scripts/run.sh): the daemon in the foreground and a line per
/// published state on the terminal; Ctrl-C stops both and leaves nothing running.
@Suite(.serialized)
struct MakeRunTests {
    @Test(.requires(.tools(["bash", "setsid", "pgrep", "tail"])))
    func eachPublishedStateIsALineAndCtrlCStopsEverything() async throws {
        let fixture = try DaemonFixture()
        let net = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(net.config(debounceMs: 0, sinks: ""))
        let script = PackagingTests.repo.appendingPathComponent("scripts/run.sh").path
        let output = fixture.path("terminal")
        var environment = fixture.environment
        environment["BUILD_DIR"] = URL(fileURLWithPath: Harness.binary).deletingLastPathComponent().path
        // A process group of its own, as a terminal's foreground job: Ctrl-C is SIGINT to the group.
        let run = try Spawned(["setsid", "bash", script], environment: environment,
                              stdout: .file(output), stderr: .file(fixture.path("daemon-log")))
        defer { _ = kill(-run.pid, SIGKILL) }
        func lines() -> [String] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        try net.say("online", interface: "eth0", reason: "first look")
        await Harness.waitUntil("online on the terminal") { lines().contains("online via eth0: first look") }
        try net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("offline on the terminal") { lines().contains { $0.hasPrefix("offline") } }
        let shown = lines()
        let online = shown.firstIndex(of: "online via eth0: first look")
        let offline = shown.firstIndex { $0.hasPrefix("offline") }
        #expect(online != nil && offline != nil && online! < offline!, "one line per state, in order: \(shown)")

        _ = kill(-run.pid, SIGINT)
        await Harness.waitUntil("make run to end") { !run.isRunning }
        #expect(run.exitStatus == 0, "\(fixture.path("daemon-log"))")
        // What the daemon stopped may take a moment to go (it is signalled, not waited for).
        let gone = await Harness.waitUntil(timeout: .seconds(5), "every process of make run to end") {
            (try? Harness.run(["pgrep", "-g", String(run.pid)]))?.stdout.isEmpty ?? false
        }
        if !gone {
            let left = try Harness.run(["ps", "-o", "pid,args", "-g", String(run.pid)])
            Issue.record("still running after Ctrl-C: \(left.stdout)")
        }
    }
}
