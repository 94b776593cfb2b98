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

    /// Hosts render the tooltip as markup: a portal's `Location` and a Wi-Fi's
    /// name arrive as text, escaped the way the toast escapes them.
    @Test func theTooltipIsEscapedForMarkup() {
        let e = StateEvent(state: .portal, previous: .online, since: 0, interface: "wlan0", kind: .wifi,
                           reason: "redirected to http://x/<b>hi</b>?a=1&b='2'", sequence: 3, connection: "<i>Café</i>")
        let look = TrayLook(Update(event: e, isTransition: true), now: 0)
        #expect(look.text.contains("http://x/&lt;b&gt;hi&lt;/b&gt;?a=1&amp;b=&apos;2&apos;"), "\(look.text)")
        #expect(look.text.contains("&lt;i&gt;Café&lt;/i&gt;"), "\(look.text)")
        #expect(!look.text.contains("<"), "\(look.text)")
        #expect(look.text.contains("\n"), "lines stay lines: \(look.text)")
        #expect(look.heading == "Sign in to the network")
    }

    @Test func throughAVPNTheTooltipNamesTheLinkUnderneath() {
        var e = StateEvent(state: .online, previous: .limited, since: 0, interface: "wg0", kind: .vpn,
                           reason: "probe answered in 20 ms", sequence: 4)
        (e.underneath, e.underneathKind) = ("wlan0", .wifi)
        let text = TrayText.sentence(e)
        #expect(text.contains(", on wg0 (vpn) over wlan0 (wifi)."), "\(text)")
    }

    /// What the portal's API says is left of the session, once signed in; nothing while it asks for a sign-in.
    @Test func theTooltipSaysWhatIsLeftOfTheSession() {
        var portal = CaptivePortal(api: "https://p.example/api", source: .ra)
        portal.captive = false
        portal.secondsRemaining = 720
        portal.bytesRemaining = 40_000_000
        #expect(TrayText.sessionLeft(portal) == "Session: 12m, 40 MB left.")
        portal.bytesRemaining = 512
        portal.secondsRemaining = nil
        #expect(TrayText.sessionLeft(portal) == "Session: 512 bytes left.")
        portal.captive = true
        #expect(TrayText.sessionLeft(portal) == nil)
        #expect(TrayText.sessionLeft(nil) == nil)
    }
}
