import Foundation
import LifelineTestKit
import Testing

/// What a probe round costs the daemon's pool while online and idle: the
/// timer that starts it and the probe's result coming back, nothing more.
/// The counter watcher, backed off, samples right after the result on the
/// same thread (no timer of its own, no second thread woken for it).
/// Counted with the kernel's voluntary context switches of the pool's threads.
@Suite(.serialized) struct QuietProbeRoundTests {
    @Test func anIdleProbeRoundWakesThePoolTwice() async throws {
        guard Harness.available(.rootAnd(["ip", "nft", "python3", "dbus-daemon"])) else { return }
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // A session bus, so the D-Bus service does not retry reaching one.
        let bus = try PrivateBus()
        // A probe every 2 s, so the window holds several rounds; the counter
        // watcher's longest step is then 2 s too, so it has backed off at once.
        let fixture = try ProbeTests().startDaemon(lab, config: """
            [[monitor]]
            kind = "netlink"

            [[monitor]]
            kind = "probe"
            url = "\(lab.checkURL)"
            interval = "2s"

            [[sink]]
            kind = "log"
            """, environment: bus.environment)
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        let pid = try #require(fixture.process?.pid)
        try await Task.sleep(for: .seconds(3))  // start-up work settles: the fixed warm-up, not a wait for anything

        let requestsBefore = lab.requests(.ok).count
        let before = ThreadSwitches(pid: pid).byName["lifeline-pool"] ?? 0
        try await Task.sleep(for: .seconds(12))  // the fixed window: about six rounds
        let after = ThreadSwitches(pid: pid).byName["lifeline-pool"] ?? 0
        let rounds = lab.requests(.ok).count - requestsBefore
        #expect(rounds >= 4, "only \(rounds) probe rounds in 12 s")
        // Two per round; a round cut by the window's edges may add two.
        #expect(after - before <= 2 * rounds + 2, "\(after - before) pool wake-ups for \(rounds) probe rounds")
        #expect(fixture.loggedStates() == ["online"])
        #expect(await fixture.stop() == 0)
    }
}
