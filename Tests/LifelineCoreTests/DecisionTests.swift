import LifelineCore
import Testing

/// Every rule of the decision (docs/design.md), and the precedence between them.
@Suite struct DecisionTests {
    func link(_ state: ConnectivityState, _ iface: String = "wlan0", kind: InterfaceKind = .wifi, reason: String = "link") -> Observation {
        Observation(role: .link, state: state, interface: iface, kind: kind, reason: reason)
    }

    func probe(_ state: ConnectivityState, rtt: Double? = nil, reason: String = "probe") -> Observation {
        Observation(role: .reachability, state: state, reason: reason, rttMs: rtt)
    }

    func decide(_ observations: [Observation]) -> Verdict? {
        Decision.decide(observations.enumerated().map { Decision.Input($1, stamp: UInt64($0 + 1)) })
    }

    @Test func nothingObservedDecidesNothing() {
        #expect(decide([]) == nil)
    }

    @Test func offlineWhenNoUsableRoute() {
        let v = decide([link(.offline, "", kind: .none, reason: "default route via wlan0 removed")])
        #expect(v?.state == .offline)
        #expect(v?.interface == "")
        #expect(v?.reason == "default route via wlan0 removed")
    }

    @Test func linkFactsBeatProbeResults() {
        // The probe said online a moment ago, but the route is gone: offline.
        let v = decide([probe(.online, rtt: 12), link(.offline, "", kind: .none)])
        #expect(v?.state == .offline)
        // Order does not matter: a later probe result cannot resurrect a missing route.
        #expect(decide([link(.offline, "", kind: .none), probe(.online, rtt: 12)])?.state == .offline)
    }

    @Test func limitedWhenRouteButNoAnswer() {
        let v = decide([link(.online), probe(.limited, reason: "probe to http://x timed out after 5s")])
        #expect(v?.state == .limited)
        #expect(v?.interface == "wlan0")
        #expect(v?.kind == .wifi)
        #expect(v?.reason == "probe to http://x timed out after 5s")
    }

    @Test func portalWhenUnexpectedAnswer() {
        #expect(decide([link(.online), probe(.portal)])?.state == .portal)
    }

    @Test func onlineWhenProbeAnswers() {
        let v = decide([link(.online), probe(.online, rtt: 23.5)])
        #expect(v?.state == .online)
        #expect(v?.rttMs == 23.5)
        #expect(v?.interface == "wlan0")
    }

    @Test func onlineFromRouteAloneWhenProbingIsDisabled() {
        let v = decide([link(.online, "eth0", kind: .ethernet, reason: "default route via eth0")])
        #expect(v?.state == .online)
        #expect(v?.interface == "eth0")
        #expect(v?.kind == .ethernet)
    }

    @Test func aLinkMonitorThatKnowsMoreIsBelievedWithoutAProbe() {
        #expect(decide([link(.portal)])?.state == .portal)
    }

    @Test func probeAloneDecidesWithoutALinkMonitor() {
        #expect(decide([probe(.limited)])?.state == .limited)
        #expect(decide([probe(.online)])?.state == .online)
    }

    @Test func freshestReachabilityWins() {
        // NetworkManager's old verdict loses to the probe that just answered.
        let nm = Observation(role: .reachability, state: .portal, reason: "NetworkManager")
        #expect(decide([link(.online), nm, probe(.online)])?.state == .online)
        #expect(decide([link(.online), probe(.online), nm])?.state == .portal)
    }

    @Test func anyUsableLinkMonitorKeepsTheRoute() {
        // netlink sees a route NetworkManager does not manage: not offline.
        let nmDisconnected = Observation(role: .link, state: .offline, reason: "NetworkManager disconnected")
        #expect(decide([nmDisconnected, link(.online, "eth0"), probe(.online)])?.state == .online)
        // Only when every link monitor says offline is the machine offline.
        #expect(decide([nmDisconnected, link(.offline, "")])?.state == .offline)
    }

    @Test func meteredComesFromWhoeverKnows() {
        var nm = Observation(role: .link, state: .online, interface: "wwan0", kind: .wwan)
        nm.metered = true
        #expect(decide([nm, probe(.online)])?.metered == true)
        #expect(decide([link(.online), probe(.online)])?.metered == false)
    }
}
