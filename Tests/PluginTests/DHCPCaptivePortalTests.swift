import LifelineCore
import LifelineDBus
import Testing

@testable import LifelineNet
@testable import NetworkManagerMonitor

/// NetworkManager's DHCP `Options` as a captive-portal announcement: the
/// names it gives the options, and what a network may put in them.
@Suite struct DHCPCaptivePortalTests {
    let api = "https://portal.example/capport"

    func v4(_ options: [(String, BusValue)]) -> CaptivePortalOption? {
        DHCPCaptivePortal.option(in: options, names: DHCPCaptivePortal.dhcp4Names)
    }

    @Test func optionsNamesAreNetworkManagersOwn() {
        // 114 is `default_url` in NetworkManager's table and in dhclient's.
        #expect(v4([("ip_address", .string("10.0.0.2")), ("default_url", .string(api))]) == .api(api))
        #expect(DHCPCaptivePortal.option(in: [("dhcp6_captive_portal", .string(api))], names: DHCPCaptivePortal.dhcp6Names)
                == .api(api))
        // Not option 114: the request marker, option 160 (retired, used by others), a DHCPv6 name in DHCPv4.
        for name in ["requests_default_url", "v4_captive_portal", "dhcp6_captive_portal", "private_114"] {
            #expect(v4([(name, .string(api))]) == nil, "\(name)")
        }
        #expect(v4([]) == nil)
    }

    @Test func theValueIsCheckedAsEveryAnnouncementIs() {
        #expect(v4([("default_url", .string("  \(api) "))]) == .api(api))
        #expect(v4([("default_url", .string(CaptivePortal.unrestricted))]) == .unrestricted)
        guard case .refused(let http)? = v4([("default_url", .string("http://portal.example/capport"))]) else {
            Issue.record("http:// taken"); return
        }
        #expect(http.contains("is not an https:// URL"), "\(http)")
        guard case .refused(let huge)? = v4([("default_url", .string("https://" + String(repeating: "a", count: 1 << 20)))]) else {
            Issue.record("1 MiB taken"); return
        }
        #expect(huge.contains("not a plain URL") && huge.count < 200, "\(huge.prefix(200))")
        guard case .refused(let typed)? = v4([("default_url", .uint32(114))]) else {
            Issue.record("a number taken"); return
        }
        #expect(typed == "NetworkManager's DHCP option default_url is not a string (D-Bus type u)")
    }

    @Test func theLinkObservationCarriesTheAnnouncementForItsInterface() {
        var view = NetworkManagerView(state: 70, connectivity: 4, checkEnabled: true, connectionType: "802-11-wireless",
                                      connectionName: "Hotel", interface: "wlan0")
        #expect(view.link.captivePortal == nil)
        view.dhcp6Portal = .api(api + "6")
        view.dhcp4Portal = .refused("bad")
        #expect(view.link.captivePortal == CaptivePortal(api: api + "6", source: .networkmanager))
        view.dhcp4Portal = .api(api)
        #expect(view.link.captivePortal == CaptivePortal(api: api, source: .networkmanager))
        #expect(view.link.interface == "wlan0")
        view.dhcp4Portal = .unrestricted
        #expect(view.link.captivePortal == nil, "the network says it has no portal")
        view.dhcp4Portal = .api(api)
        view.state = 20
        #expect(view.link.captivePortal == nil, "disconnected")
    }
}
