import LifelineCore
import LifelineTestKit
import Testing
@testable import NetworkManagerMonitor

/// NetworkManager's properties as observations, and which of them reach the core.
@Suite struct NetworkManagerViewTests {
    func view(state: UInt32 = 70, connectivity: UInt32 = 4, metered: UInt32 = 0, type: String = "802-11-wireless")
        -> NetworkManagerView
    {
        NetworkManagerView(state: state, connectivity: connectivity, metered: metered, checkEnabled: true,
                           connectionType: type, connectionName: "Home Wi-Fi", interface: "wlan0")
    }

    @Test func connectionTypesAreKinds() {
        let kinds: [(String, InterfaceKind)] = [
            ("802-3-ethernet", .ethernet), ("802-11-wireless", .wifi), ("gsm", .wwan), ("cdma", .wwan),
            ("vpn", .vpn), ("wireguard", .vpn), ("bluetooth", .other), ("bond", .other), ("", .none),
        ]
        for (type, kind) in kinds { #expect(NetworkManagerView.kind(ofType: type) == kind, "\(type)") }
    }

    @Test func disconnectedIsALinkFactAndConnectedSaysNothingAboutTheLink() {
        for state: UInt32 in [10, 20] {
            #expect(view(state: state).link.state == .offline)
            #expect(view(state: state).reachability.state == .unknown)
        }
        for state: UInt32 in [0, 30, 40, 50, 60, 70] { #expect(view(state: state).link.state == .unknown) }
        let link = view(metered: 1).link
        #expect(link.connection == "Home Wi-Fi")
        #expect(link.kind == .wifi)
        #expect(link.interface == "wlan0")
        #expect(link.metered == true)
    }

    @Test func connectivityIsAReachabilityFactInNetworkManagersWords() {
        #expect(view(connectivity: 4).reachability.state == .online)
        #expect(view(connectivity: 3).reachability.state == .limited)
        #expect(view(connectivity: 2).reachability.state == .portal)
        #expect(view(connectivity: 2).reachability.reason.contains("captive portal"))
        #expect(view(connectivity: 1).reachability.state == .limited)
        #expect(view(connectivity: 0).reachability.state == .unknown)
        #expect(view(connectivity: 99).reachability.state == .unknown)
    }

    @Test func meteredValuesIncludeNetworkManagersGuesses() {
        #expect(view(metered: 0).meteredFlag == nil)
        #expect(view(metered: 1).meteredFlag == true)
        #expect(view(metered: 2).meteredFlag == false)
        #expect(view(metered: 3).meteredFlag == true)
        #expect(view(metered: 4).meteredFlag == false)
        #expect(view(metered: 7).meteredFlag == nil)
    }

    @Test func connectivityIsSentOnlyWhenItChanges() async {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let probe = bus.makeMonitorHandle(name: "probe")
        let publisher = Publisher(handle: bus.makeMonitorHandle(name: "networkmanager"))
        publisher.publish(view(connectivity: 4))
        probe.publish(Observation(role: .reachability, state: .limited, reason: "probe timed out"))
        #expect(bus.current.state == .limited)
        // `Metered` changes: the link observation goes again, NM's FULL does not.
        publisher.publish(view(connectivity: 4, metered: 1))
        #expect(bus.current.state == .limited)
        #expect(bus.current.metered)
        // NM's own verdict changing is news again.
        publisher.publish(view(connectivity: 2, metered: 1))
        #expect(bus.current.state == .portal)
    }

    @Test func networkManagerGoneLeavesNothingBehind() {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let netlink = bus.makeMonitorHandle(name: "netlink")
        let publisher = Publisher(handle: bus.makeMonitorHandle(name: "networkmanager"))
        netlink.publish(Observation(role: .link, state: .online, interface: "wlan0", kind: .wifi, reason: "route"))
        publisher.publish(view(state: 70, connectivity: 2))
        #expect(bus.current.state == .portal)
        publisher.absent()
        // Without NM and without a probe, the route alone says online again.
        #expect(bus.current.state == .online)
        #expect(bus.current.connection == "")
    }
}

@Suite struct NetworkManagerNameTests {
    @Test func namesFromTheBusAreBounded() {
        #expect(NetworkManagerClient.bounded("Home Wi-Fi", 128) == "Home Wi-Fi")
        let long = String(repeating: "é", count: 10_000)
        #expect(NetworkManagerClient.bounded(long, 128) == String(repeating: "é", count: 128) + "…")
    }
}
