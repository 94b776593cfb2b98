import Foundation
import LifelineTestKit
import Testing

/// What a probe round costs the whole daemon while online and idle: the
/// timer that starts it and the check server's reply (and the handshake's
/// answer, when the thread parked before it came), nothing more. The reply
/// wakes the thread that goes on with the probe (no thread of the probe's own
/// woken and then waking another to hand its result over), and the counter
/// watcher, backed off, samples right after the result on that same thread.
/// Counted with the kernel's voluntary context switches of every thread of
/// the daemon; no thread comes meanwhile.
@Suite(.serialized) struct QuietProbeRoundTests {
    @Test(.requires(.rootAnd(["ip", "nft", "python3", "dbus-daemon"]))) func anIdleProbeRoundWakesOnlyThePoolAndStartsNoThread() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let bus = try PrivateBus()
        let fixture = try startDaemon(lab, bus: bus)
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        try await Task.sleep(for: .seconds(3))  // start-up work settles: the fixed warm-up, not a wait for anything
        try await expectOnlyThePoolWakes(fixture, minimumRounds: 4)
        #expect(fixture.loggedStates() == ["online"])
        #expect(await fixture.stop() == 0)
    }

    /// The same in an outage, the machine idle: a round wakes the daemon for
    /// its timer and for the connect's deadline, and the counter watcher,
    /// backed off to the interval, samples right after each round instead of
    /// on a timer of its own (which added a wake-up per interval).
    @Test(.requires(.rootAnd(["ip", "nft", "python3", "dbus-daemon"]))) func anIdleRoundInAnOutageWakesOnlyThePoolAndStartsNoThread() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let bus = try PrivateBus()
        // The ramp (1 s, then 2 s) and the counter watcher's back-off (1 s,
        // 2 s) both reach the interval within seconds.
        let fixture = try startDaemon(lab, bus: bus, probeKeys: "timeout = \"1s\"")
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        try lab.blackhole()
        #expect(await fixture.waitForState("limited", timeout: .seconds(15)))
        try await Task.sleep(for: .seconds(8))  // the ramp and the back-off settle: a fixed warm-up, not a wait for anything
        try await expectOnlyThePoolWakes(fixture, minimumRounds: 3)  // rounds of 1 s every 3 s
        #expect(fixture.loggedStates() == ["online", "limited"])
        #expect(await fixture.stop() == 0)
    }

    /// A daemon probing the lab every 2 s, so a window holds several rounds;
    /// the counter watcher's longest step is then 2 s too. A session bus, so
    /// the D-Bus service does not retry reaching one.
    private func startDaemon(_ lab: ProbeLab, bus: PrivateBus, probeKeys: String = "") throws -> DaemonFixture {
        try ProbeTests().startDaemon(lab, config: """
            [[monitor]]
            kind = "netlink"

            [[monitor]]
            kind = "probe"
            url = "\(lab.checkURL)"
            interval = "2s"
            \(probeKeys)

            [[sink]]
            kind = "log"
            """, environment: bus.environment)
    }

    /// Over a window of `minimumRounds` probe rounds, however long the machine
    /// takes for them: only the pool's threads woke (the round runs where its
    /// timer and its reply wake it; no thread of the probe's own, no hand-over to
    /// another), and no thread came (one started for a round would take its
    /// wake-ups with it when it ends; one may go: libdispatch ends its idle worker
    /// a few seconds after start-up, where the signal handlers ran). How many
    /// wake-ups a round costs is bench/idle.sh's goal row: on a loaded machine a
    /// thread also parks on a lock its preempted neighbour holds, so a count here
    /// would measure the load.
    private func expectOnlyThePoolWakes(_ fixture: DaemonFixture, minimumRounds: Int) async throws {
        let pid = try #require(fixture.process?.pid)
        func roundsSoFar() -> Int { fixture.daemonLog.components(separatedBy: "probing (").count }
        let roundsBefore = roundsSoFar()
        let before = ThreadSwitches(pid: pid)
        await Harness.waitUntil(timeout: .seconds(60), "\(minimumRounds) probe rounds") { roundsSoFar() - roundsBefore >= minimumRounds }
        let after = ThreadSwitches(pid: pid)
        let rounds = roundsSoFar() - roundsBefore
        #expect(Set(after.byThread.keys).isSubset(of: before.byThread.keys), "threads came: \(before.names) → \(after.names)")
        let woken = after.byThread.values.reduce(0, +) - before.byThread.values.reduce(0, +)
        let byName = after.byName.map { name, count in (name, count - (before.byName[name] ?? 0)) }.filter { $0.1 > 0 }
        #expect(byName.allSatisfy { $0.0 == "lifeline-pool" }, "threads other than the pool woke: \(byName)")
        print("QuietProbeRoundTests: \(woken) wake-ups for \(rounds) probe rounds: \(byName)")
    }
}
