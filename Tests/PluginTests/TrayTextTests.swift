import LifelineCore
import Testing
@testable import TraySink

/// The tray's tooltip: what a person reads, with nothing a reason could smuggle in.
@Suite struct TrayTextTests {
    @Test func theTooltipNamesConnectionReasonAndLayer() {
        var e = StateEvent(state: .offline, previous: .online, since: 0, interface: "wlan0", kind: .wifi,
                           reason: "no carrier\u{202E}\u{1B}[2J", sequence: 3, connection: "{time} Wi-Fi")
        e.diagnosis = .carrier
        let text = TrayText.sentence(e)
        #expect(text.contains(", on {time} Wi-Fi (wifi)."), "\(text)")
        #expect(text.contains("\nno carrier[2J\n"), "\(text)")
        #expect(text.hasSuffix("Failed first: the cable or Wi-Fi association."), "\(text)")
    }
}
