import Foundation
import LifelineTestKit
import Testing

/// The internet lost on an idle machine (nothing but the probe's own packets,
/// netlink sees nothing, the router still answers), with the default probe
/// and debounce settings, against a lossy but working link and a slow but
/// answering check server. The real daemon runs in the probe lab's namespace
/// (`ProbeLab`); its check server is on the lab's host end.
@Suite(.serialized) struct ProbeIdleLossTests {
    /// The defaults of the probe (interval 30 s, timeout 5 s, two failures)
    /// and of the debounce (down 2 s, up 1 s); only the URL and `interval`
    /// differ.
    static func config(url: String, interval: String = "30s") -> String {
        """
        [debounce]
        down = "2s"
        up = "1s"

        [[monitor]]
        kind = "netlink"

        [[monitor]]
        kind = "probe"
        url = "\(url)"
        interval = "\(interval)"

        [[sink]]
        kind = "log"
        """
    }

    /// The worst moment: the upstream goes silent just after a probe got its
    /// answer, so the next probe is a whole interval away. Interval, two
    /// probes that each give up on a connection that does not come up
    /// (1.25 s), debounce: 30 + 2.5 + 2 = 34.5 s. Twice: the second time
    /// after a recovery, whose first answer came only after a SYN retransmission.
    @Test(.requires(ProbeTests.requirement)) func idleBlackholeRightAfterAProbeIsLimitedWithin35Seconds() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(url: lab.checkURL))
        #expect(await Harness.waitUntil(timeout: .seconds(10), "the first probe at the server") { !lab.requests(.ok).isEmpty })
        try await blackholeIsLimitedWithin35Seconds(lab, fixture)
        #expect(fixture.loggedStates() == ["online", "limited"])
        #expect(lab.requests(.ok).count == 1, "nothing got through the blackhole")

        try lab.heal()
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        // The next probe is the interval's; the upstream goes silent again right after it.
        let answered = lab.requests(.ok).count
        #expect(await Harness.waitUntil(timeout: .seconds(40), "the interval's probe at the server") {
            lab.requests(.ok).count > answered
        })
        try await blackholeIsLimitedWithin35Seconds(lab, fixture)
        #expect(fixture.loggedStates() == ["online", "limited", "online", "limited"])
        #expect(await fixture.stop() == 0)
    }

    func blackholeIsLimitedWithin35Seconds(_ lab: ProbeLab, _ fixture: DaemonFixture,
                                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try lab.blackhole()
        let start = ContinuousClock.now
        #expect(await fixture.waitForState("online", timeout: .seconds(5)), sourceLocation: sourceLocation)
        #expect(await fixture.waitForState("limited", timeout: .seconds(50)), sourceLocation: sourceLocation)
        let took = ContinuousClock.now - start
        #expect(took <= .seconds(35), "limited published \(took) after the blackhole", sourceLocation: sourceLocation)
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "TCP connect to \(lab.hostAddress):8080 timed out after 1250ms", "\(reason)",
                sourceLocation: sourceLocation)
    }

    /// A fifth of the packets to the check server lost at random: a probe's
    /// SYN (and its retransmission) may be lost, but never an outage published.
    @Test(.requires(ProbeTests.requirement)) func aLossyButWorkingLinkIsNeverLimited() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // A probe every 2 s: about twenty rounds in the run.
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "2s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        try lab.lossy(percent: 20)
        let before = lab.requests(.ok).count
        try await Task.sleep(for: .seconds(40))  // the fixed run, not a wait for anything
        #expect(fixture.loggedStates() == ["online"], "published on a lossy but working link: \(fixture.loggedStates())")
        let probes = lab.requests(.ok).count - before
        #expect(probes >= 12, "only \(probes) probes answered in the run")
        #expect(lab.droppedPackets() > 0, "the link lost nothing")
        #expect(await fixture.stop() == 0)
    }

    /// A server that accepts at once but answers after 3 s is working: the
    /// whole 5 s timeout still applies once the connection is up.
    @Test(.requires(ProbeTests.requirement)) func aServerAnsweringAfterThreeSecondsStaysOnline() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.late)
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "2s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        try await Task.sleep(for: .seconds(16))  // the fixed run: three probes or more after the first
        #expect(fixture.loggedStates() == ["online"], "\(fixture.loggedStates())")
        #expect(lab.requests(.late).count >= 4, "\(lab.requests(.late).count) probes")
        let status = try fixture.statusJSON()
        #expect(status["state"] as? String == "online")
        #expect((status["rtt_ms"] as? Double ?? 0) >= 3000, "round trip \(status["rtt_ms"] ?? "none")")
        #expect(await fixture.stop() == 0)
    }
}
