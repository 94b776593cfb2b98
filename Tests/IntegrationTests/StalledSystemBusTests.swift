import Foundation
import LifelineTestKit
import Testing

/// A system bus that lets the daemon in and then answers nothing
/// (`Resources/stalled_bus.py`): every `networkmanager` monitor is left
/// waiting for its `AddMatch`. The daemon's pool has one thread per core;
/// with as many such monitors as threads, a monitor that waited on a pool
/// thread would leave none for the debounce timer.
@Suite(.serialized) struct StalledSystemBusTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/stalled_bus.py").path

    @Test(.requires(.tools(["python3"]))) func networkManagerOnAStalledBusHoldsNoThreadOfThePool() async throws {
        let probe = try DaemonFixture()
        let socket = probe.path("stalled-system-bus")
        let calls = probe.path("stalled-calls.log")
        let bus = try Spawned(["/usr/bin/python3", Self.script, socket, calls])
        defer { bus.kill() }
        await Harness.waitUntil("the stalled bus listens") { FileManager.default.fileExists(atPath: socket) }

        let fixture = try DaemonFixture(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)"])
        let net = ScriptedNetwork(fixture: fixture)
        let threads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let monitors = String(repeating: "[[monitor]]\nkind = \"networkmanager\"\n\n", count: threads)
        try fixture.writeConfig(net.config(debounceMs: 300, sinks: "[[sink]]\nkind = \"log\"\n\n" + monitors))
        try fixture.start()
        defer { fixture.stopNow() }
        #expect(await Harness.waitUntil(timeout: .seconds(10), "every monitor waiting for its AddMatch") {
            ((try? String(contentsOfFile: calls, encoding: .utf8)) ?? "").components(separatedBy: "AddMatch").count - 1 >= threads
        })

        let start = ContinuousClock.now
        try net.say("offline", reason: "cable pulled")
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)), "\(fixture.daemonLog)")
        // 300 ms of debounce, and the rest is the test's own polling.
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(await fixture.stop() == 0)
    }
}
