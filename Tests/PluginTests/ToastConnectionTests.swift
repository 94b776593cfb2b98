import LifelineCore
import Testing
@testable import NotifySink

/// The toast names the connection as NetworkManager does: "Home Wi-Fi (wifi, metered)".
@Suite struct ToastConnectionTests {
    func event(_ state: ConnectivityState, connection: String, metered: Bool) -> StateEvent {
        StateEvent(state: state, previous: .online, since: 1_000_000, interface: "wlan0", kind: .wifi,
                   reason: "probe timed out", metered: metered, sequence: 2, connection: connection)
    }

    @Test func backOnlineSaysWhichConnection() {
        let outage = Outage(id: 1, since: 0, worst: .offline, endedAt: 133_000_000)
        let toast = ToastPolicy.backOnline(outage, event: event(.online, connection: "Home Wi-Fi", metered: true))
        #expect(toast.body == "Back online via Home Wi-Fi (wifi, metered) — offline for 2m 13s.")
    }

    @Test func anOutageSaysWhichConnection() {
        let toast = ToastPolicy.toast(for: event(.limited, connection: "Home Wi-Fi", metered: false))
        #expect(toast.body.hasPrefix("The network on Home Wi-Fi (wifi) does not reach the internet."), "\(toast.body)")
    }

    @Test func withoutANameTheInterfaceStays() {
        let toast = ToastPolicy.toast(for: event(.limited, connection: "", metered: false))
        #expect(toast.body.hasPrefix("The network on wlan0 (wifi) does not reach the internet."), "\(toast.body)")
    }

    /// Through a VPN the toast says which tunnel and which link carries it.
    @Test func throughAVPNTheLinkUnderneathIsNamed() {
        var e = StateEvent(state: .limited, previous: .online, since: 1_000_000, interface: "wg0", kind: .vpn,
                           reason: "the VPN tunnel wg0 passes no traffic", sequence: 2)
        (e.underneath, e.underneathKind) = ("wlan0", .wifi)
        let toast = ToastPolicy.toast(for: e)
        #expect(toast.body.contains("wg0 (vpn) over wlan0 (wifi)"), "\(toast.body)")
    }
}
