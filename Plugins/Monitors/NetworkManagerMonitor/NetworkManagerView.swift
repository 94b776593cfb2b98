import LifelineCore
import LifelineNet

/// What NetworkManager says, as the monitor last read it, and the observations
/// that say it to the core. Pure: the D-Bus side only fills the fields.
///
/// - `State` DISCONNECTED (20) or below is a link fact: `offline`. Any other
///   state says nothing about the link (`unknown`): NetworkManager never claims a
///   route the kernel has not got, so netlink stays the judge of "a usable route".
/// - `Connectivity` is a reachability fact in NetworkManager's own words:
///   FULL `online`, PORTAL `portal`, LIMITED and NONE `limited`. UNKNOWN, or any
///   connectivity while disconnected (the link already says it), says nothing.
/// - Both carry what only NetworkManager knows: the primary connection's name,
///   its kind (from its `Type`), its device's interface and `Metered`; the link
///   observation also the captive-portal API its DHCP options announce.
struct NetworkManagerView: Equatable, Sendable {
    /// `NMState`: 0 unknown, 10 asleep, 20 disconnected, 30 disconnecting,
    /// 40 connecting, 50 connected (local), 60 (site), 70 (global).
    var state: UInt32 = 0
    /// `NMConnectivityState`: 0 unknown, 1 none, 2 portal, 3 limited, 4 full.
    var connectivity: UInt32 = 0
    /// `NMMetered`: 0 unknown, 1 yes, 2 no, 3 guessed yes, 4 guessed no.
    var metered: UInt32 = 0
    var checkEnabled = false
    /// The primary connection's `Type` ("802-11-wireless"), `Id` ("Home Wi-Fi")
    /// and the `Interface` of its first device; "" when there is none.
    var connectionType = ""
    var connectionName = ""
    var interface = ""
    /// The captive-portal API in the primary connection's DHCPv4 and DHCPv6
    /// options (`DHCPCaptivePortal`); nil where they name none.
    var dhcp4Portal: CaptivePortalOption?
    var dhcp6Portal: CaptivePortalOption?

    static func kind(ofType type: String) -> InterfaceKind {
        switch type {
        case "": .none
        case "802-3-ethernet", "ethernet": .ethernet
        case "802-11-wireless", "wifi": .wifi
        case "gsm", "cdma": .wwan
        case "vpn", "wireguard": .vpn
        default: .other
        }
    }

    var meteredFlag: Bool? {
        switch metered {
        case 1, 3: true
        case 2, 4: false
        default: nil
        }
    }

    var isDisconnected: Bool { state != 0 && state <= 20 }

    var link: Observation {
        let linkState: ConnectivityState = isDisconnected ? .offline : .unknown
        let reason = switch state {
        case 10: "NetworkManager is asleep (networking disabled)"
        case 20: "NetworkManager is disconnected"
        case 1..<20: "NetworkManager is not connected (state \(state))"
        default: "NetworkManager state \(state)"
        }
        var link = observation(.link, linkState, reason)
        if !isDisconnected { link.captivePortal = announcedPortal }
        return link
    }

    /// The usable announcement, DHCPv4's first; nil when there is none, it
    /// was refused, or the network said it has no portal.
    var announcedPortal: CaptivePortal? {
        for option in [dhcp4Portal, dhcp6Portal] {
            switch option {
            case .api(let url)?: return CaptivePortal(api: url, source: .networkmanager)
            case .unrestricted?: return nil
            case .refused?, nil: continue
            }
        }
        return nil
    }

    var reachability: Observation {
        guard !isDisconnected else {
            return observation(.reachability, .unknown, "NetworkManager is disconnected")
        }
        return switch connectivity {
        case 1: observation(.reachability, .limited, "NetworkManager: no connectivity (the host is not connected to any network)")
        case 2: observation(.reachability, .portal, "NetworkManager: connectivity portal (the connection is hijacked by a captive portal)")
        case 3: observation(.reachability, .limited, "NetworkManager: limited connectivity (the internet does not answer)")
        case 4: observation(.reachability, .online, "NetworkManager: full connectivity")
        default: observation(.reachability, .unknown, "NetworkManager: connectivity unknown")
        }
    }

    private func observation(_ role: ObservationRole, _ state: ConnectivityState, _ reason: String) -> Observation {
        Observation(
            role: role, state: state, interface: interface, kind: Self.kind(ofType: connectionType),
            reason: reason, metered: meteredFlag, connection: connectionName)
    }

    /// The observations NetworkManager leaving the bus leaves behind: nothing known.
    static var absent: (link: Observation, reachability: Observation) {
        (Observation(role: .link, state: .unknown, reason: "NetworkManager is not running"),
         Observation(role: .reachability, state: .unknown, reason: "NetworkManager is not running"))
    }
}
