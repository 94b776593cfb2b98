import LifelineCore
import Testing
@testable import TraySink

/// The tray's sentences: placeholders filled once, whatever the values hold.
@Suite struct TrayTextTests {
    @Test func aValueThatLooksLikeAPlaceholderIsShownAsItIs() {
        // A connection's name is anyone's to choose, braces and all.
        let keys = (0..<8).map { "k\($0)" }
        let template = keys.map { "{\($0)}" }.joined(separator: " ")
        let values = Dictionary(uniqueKeysWithValues: keys.enumerated().map { i, key in (key, i + 1 < keys.count ? "{\(keys[i + 1])}" : "end") })
        #expect(TrayText.fill(template, values) == "{k1} {k2} {k3} {k4} {k5} {k6} {k7} end")
    }

    @Test func unknownPlaceholdersAndLoneBracesStay() {
        #expect(TrayText.fill("{a} {b} { } {", ["a": "1"]) == "1 {b} { } {")
    }

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
