import Clocks
import LifelineCore
import LifelineTestKit
import Synchronization
import Testing

/// How NetworkManager's view joins netlink's and the probe's: the table of
/// disagreements, and the sequences that must not flap.
@Suite struct NetworkManagerDecisionTests {
    func netlink(_ state: ConnectivityState, _ iface: String = "wlan0", kind: InterfaceKind = .other) -> Observation {
        Observation(role: .link, state: state, interface: state == .offline ? "" : iface, kind: state == .offline ? .none : kind,
                    reason: state == .offline ? "default route removed" : "default route via \(iface)")
    }

    /// NetworkManager's link observation: `offline` when disconnected, else it says nothing about the link.
    func nmLink(disconnected: Bool = false, _ iface: String = "wlan0", name: String = "Home Wi-Fi", kind: InterfaceKind = .wifi,
                metered: Bool? = nil) -> Observation {
        Observation(role: .link, state: disconnected ? .offline : .unknown, interface: disconnected ? "" : iface,
                    kind: disconnected ? .none : kind, reason: disconnected ? "NetworkManager is disconnected" : "NetworkManager state 70",
                    metered: metered, connection: disconnected ? "" : name)
    }

    func nmConnectivity(_ state: ConnectivityState, _ reason: String, _ iface: String = "wlan0") -> Observation {
        Observation(role: .reachability, state: state, interface: iface, kind: .wifi, reason: reason, connection: "Home Wi-Fi")
    }

    func probe(_ state: ConnectivityState, reason: String = "probe") -> Observation {
        Observation(role: .reachability, state: state, reason: reason)
    }

    func decide(_ observations: [Observation]) -> Verdict? {
        Decision.decide(observations.enumerated().map { Decision.Input($1, stamp: UInt64($0 + 1)) })
    }

    @Test func connectedGlobalButTheProbeTimesOutIsLimited() {
        let v = decide([netlink(.online), nmLink(), nmConnectivity(.online, "NetworkManager: full connectivity"),
                        probe(.online), probe(.limited, reason: "probe timed out after 5s")])
        #expect(v?.state == .limited)
        #expect(v?.reason == "probe timed out after 5s")
    }

    @Test func anOldFullConnectivityDoesNotComeBackWithAnAttributeChange() {
        // The link observation carries the new `Metered`; NM's FULL keeps its old stamp.
        let v = decide([netlink(.online), nmConnectivity(.online, "NetworkManager: full connectivity"),
                        probe(.limited, reason: "probe timed out after 5s"), nmLink(metered: true)])
        #expect(v?.state == .limited)
        #expect(v?.metered == true)
    }

    @Test func networkManagersPortalAndLimitedAreReachabilityFacts() {
        let portal = decide([netlink(.online), probe(.online),
                             nmConnectivity(.portal, "NetworkManager: connectivity portal")])
        #expect(portal?.state == .portal)
        #expect(portal?.reason == "NetworkManager: connectivity portal")
        let limited = decide([netlink(.online), probe(.online), nmConnectivity(.limited, "NetworkManager: limited connectivity")])
        #expect(limited?.state == .limited)
    }

    @Test func disconnectedIsOfflineOnlyOnceTheKernelAgrees() {
        // NM says DISCONNECTED a moment before the kernel drops the route.
        #expect(decide([netlink(.online), probe(.online), nmLink(disconnected: true)])?.state == .online)
        // (One input per monitor, as the bus keeps them: netlink's newest view replaces its older one.)
        #expect(decide([probe(.online), nmLink(disconnected: true), netlink(.offline)])?.state == .offline)
        // With no other link monitor, NM's word is the link fact.
        #expect(decide([nmLink(disconnected: true), probe(.online)])?.state == .offline)
    }

    @Test func aConnectedNetworkManagerNeverKeepsADeadRouteAlive() {
        // Carrier lost: the kernel knows at once, NM says DISCONNECTED seconds later.
        let v = decide([nmLink(), probe(.online), netlink(.offline)])
        #expect(v?.state == .offline)
        #expect(v?.connection == "")
        #expect(Decision.route([nmLink(), netlink(.offline)].enumerated().map {
            Decision.Input($1, stamp: UInt64($0 + 1))
        }).interface == nil)
    }

    @Test func theConnectionsNameKindAndMeteredBeatNetlinksGuess() {
        let v = decide([netlink(.online, "wlan0", kind: .other), nmLink(metered: true), probe(.online)])
        #expect(v?.state == .online)
        #expect(v?.interface == "wlan0")
        #expect(v?.kind == .wifi)
        #expect(v?.connection == "Home Wi-Fi")
        #expect(v?.metered == true)
    }

    @Test func aNameForAnotherInterfaceIsNotBorrowed() {
        let v = decide([netlink(.online, "eth0", kind: .ethernet), nmLink("wlan0"), probe(.online)])
        #expect(v?.interface == "eth0")
        #expect(v?.kind == .ethernet)
        #expect(v?.connection == "")
    }

    @Test func anOfflineVerdictNamesNoConnection() {
        // A third-party reachability monitor may say offline; no name or interface is lent to it.
        let v = decide([nmLink(), Observation(role: .reachability, state: .offline, reason: "exec says offline")])
        #expect(v?.state == .offline)
        #expect(v?.interface == "")
        #expect(v?.connection == "")
    }

    @Test func networkManagerAloneDecidesWithItsOwnInterface() {
        let v = decide([nmLink(), nmConnectivity(.online, "NetworkManager: full connectivity")])
        #expect(v?.state == .online)
        #expect(v?.interface == "wlan0")
        #expect(v?.connection == "Home Wi-Fi")
    }

    // MARK: Sequences through the bus (debounce 2 s down, 1 s up)

    func setUp(_ clock: TestClock<Duration>) -> (Bus, MonitorHandle, MonitorHandle, MonitorHandle, InMemorySink, Task<Void, any Error>) {
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let sink = InMemorySink()
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        return (bus, bus.makeMonitorHandle(name: "netlink"), bus.makeMonitorHandle(name: "probe", remeasuresReachability: true),
                bus.makeMonitorHandle(name: "networkmanager"), sink, task)
    }

    @Test func disconnectedWhileTheRouteLingersIsOneTransition() async {
        let clock = TestClock()
        let (_, netlink, probe, nm, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(self.netlink(.online))
        nm.publish(nmLink())
        probe.publish(self.probe(.online), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })

        nm.publish(nmLink(disconnected: true))
        nm.publish(Observation(role: .reachability, state: .unknown, reason: "NetworkManager is disconnected"))
        await clock.advance(by: .milliseconds(200))
        netlink.publish(self.netlink(.offline))
        await clock.advance(by: .seconds(5))
        #expect(await eventually { sink.states == [.online, .offline] })
        #expect(sink.transitions.last?.reason == "default route removed")
    }

    @Test func twentyConnectivityFlapsInFiveSecondsAreAtMostOneOutage() async {
        let clock = TestClock()
        let (bus, netlink, probe, nm, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(self.netlink(.online))
        nm.publish(nmLink())
        probe.publish(self.probe(.online), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })
        for i in 0..<20 {
            nm.publish(i.isMultiple(of: 2) ? nmConnectivity(.limited, "NetworkManager: limited connectivity")
                                           : nmConnectivity(.online, "NetworkManager: full connectivity"))
            await clock.advance(by: .milliseconds(250))
        }
        await clock.advance(by: .seconds(5))
        let outages = Set(sink.updates.compactMap(\.outage?.id))
        #expect(outages.count <= 1)
        #expect(bus.current.state == .online)
    }

    // MARK: Consensus first: while the probe runs, NetworkManager's verdict asks it to measure

    @Test func whileTheProbeRunsNetworkManagersLimitedAndPortalAreReasonsToProbeNotVerdicts() async {
        let clock = TestClock()
        let (bus, netlink, probe, nm, sink, task) = setUp(clock)
        defer { task.cancel() }
        let asked = CheckCount(probe)
        defer { asked.stop() }
        netlink.publish(self.netlink(.online))
        nm.publish(nmLink())
        probe.publish(self.probe(.online), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })

        nm.publish(nmConnectivity(.limited, "NetworkManager: limited connectivity"))
        // The probe is asked at once; until it answers the state stands.
        #expect(await eventually { asked.count == 1 })
        await clock.advance(by: .seconds(5))
        #expect(bus.current.state == .online)
        probe.publish(self.probe(.online, reason: "probe answered"), measuredOn: probe.path)
        nm.publish(nmConnectivity(.portal, "NetworkManager: connectivity portal"))
        #expect(await eventually { asked.count == 2 })
        await clock.advance(by: .seconds(5))
        #expect(sink.states == [.online])
        #expect(bus.current.reason == "probe answered")
    }

    @Test func aRealOutageWhileNetworkManagerSaysFullIsLimited() async {
        let clock = TestClock()
        let (bus, netlink, probe, nm, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(self.netlink(.online))
        nm.publish(nmConnectivity(.online, "NetworkManager: full connectivity"))
        probe.publish(self.probe(.online), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })
        probe.publish(self.probe(.limited, reason: "probe timed out after 5s"), measuredOn: probe.path)
        // NetworkManager's FULL, newer than the probe's answer, does not hide it.
        nm.publish(nmConnectivity(.online, "NetworkManager: full connectivity (again)"))
        await clock.advance(by: .seconds(3))
        #expect(await eventually { sink.states == [.online, .limited] })
        #expect(bus.current.reason == "probe timed out after 5s")
    }

    @Test func withoutAProbeNetworkManagersVerdictStands() async {
        let clock = TestClock()
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let sink = InMemorySink()
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        defer { task.cancel() }
        let netlink = bus.makeMonitorHandle(name: "netlink"), nm = bus.makeMonitorHandle(name: "networkmanager")
        netlink.publish(self.netlink(.online))
        nm.publish(nmConnectivity(.online, "NetworkManager: full connectivity"))
        await clock.advance(by: .seconds(2))
        #expect(await eventually { sink.states == [.online] })
        nm.publish(nmConnectivity(.limited, "NetworkManager: limited connectivity"))
        await clock.advance(by: .seconds(3))
        #expect(await eventually { sink.states == [.online, .limited] })
    }

    @Test func theNameFollowsTheConnectionWithoutATransition() async {
        let clock = TestClock()
        let (bus, netlink, probe, nm, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(self.netlink(.online))
        nm.publish(nmLink())
        probe.publish(self.probe(.online), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })
        nm.publish(nmLink(metered: true))
        #expect(await eventually { bus.current.metered })
        #expect(sink.states == [.online])
        #expect(bus.current.connection == "Home Wi-Fi")
        #expect(bus.current.kind == .wifi)
    }
}

/// Counts the check requests a monitor receives.
final class CheckCount: Sendable {
    private let seen = Mutex(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ handle: MonitorHandle) {
        let requests = handle.checkRequests()
        let t = Task { [weak self] in
            for await _ in requests { self?.seen.withLock { $0 += 1 } }
        }
        task.withLock { $0 = t }
    }

    var count: Int { seen.withLock { $0 } }
    func stop() { task.withLock { $0?.cancel() } }
}

/// NetworkManager's DHCP options announce a captive-portal API on a link
/// observation that says nothing about the link itself.
@Suite struct NetworkManagerAnnouncementTests {
    let t = NetworkManagerDecisionTests()
    let portal = CaptivePortal(api: "https://portal.example/capport", source: .networkmanager)

    func inputs(_ observations: [Observation]) -> [Decision.Input] {
        observations.enumerated().map { Decision.Input($1, stamp: UInt64($0 + 1)) }
    }

    func nm(_ portal: CaptivePortal?, on iface: String = "wlan0") -> Observation {
        var o = t.nmLink(iface)
        o.captivePortal = portal
        return o
    }

    @Test func itRidesOnThePathOfTheSameInterface() {
        #expect(Decision.route(inputs([t.netlink(.online), nm(portal)])).captivePortal == portal)
        #expect(Decision.route(inputs([nm(portal), t.netlink(.online)])).captivePortal == portal)
        #expect(Decision.decide(inputs([t.netlink(.online), nm(portal), t.probe(.online)]))?.captivePortal == portal)
        #expect(Decision.decide(inputs([t.netlink(.online), nm(portal)]))?.captivePortal == portal)
    }

    @Test func notOnAnotherInterfaceNorWhenTheLinkIsGone() {
        #expect(Decision.route(inputs([t.netlink(.online, "eth0"), nm(portal, on: "wlan0")])).captivePortal == nil)
        #expect(Decision.route(inputs([nm(portal), t.netlink(.offline)])).captivePortal == nil)
        #expect(Decision.route(inputs([t.netlink(.online), nm(nil)])).captivePortal == nil)
    }

    @Test func theLinkMonitorsOwnComesFirst() {
        var netlink = t.netlink(.online)
        let ra = CaptivePortal(api: "https://router.example/capport", source: .ra)
        netlink.captivePortal = ra
        #expect(Decision.route(inputs([netlink, nm(portal)])).captivePortal == ra)
    }
}
