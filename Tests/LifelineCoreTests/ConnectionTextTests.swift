import LifelineCore
import LifelineFormats
import Testing

/// `lifeline status` names the connection: "online via Home Wi-Fi (wifi, metered)".
@Suite struct ConnectionTextTests {
    func event(connection: String, kind: InterfaceKind = .wifi, metered: Bool) -> StateEvent {
        StateEvent(state: .online, previous: .limited, since: 0, interface: "wlan0", kind: kind,
                   reason: "probe answered in 12 ms", metered: metered, sequence: 3, connection: connection)
    }

    @Test func statusLineNamesTheConnection() {
        let e = event(connection: "Home Wi-Fi", metered: true)
        let line = StatusFormat.plainLine(e, now: 125_000_000)
        #expect(line == "online via Home Wi-Fi (wifi, metered) for 2m 5s: probe answered in 12 ms")
        #expect(StatusFormat.render("{connection}", e, now: 0) == "Home Wi-Fi")
    }

    @Test func withoutANameTheInterfaceStays() {
        let e = event(connection: "", metered: false)
        let line = StatusFormat.plainLine(e, now: 0, duration: false)
        #expect(line == "online via wlan0 (wifi): probe answered in 12 ms")
    }

    @Test func throughAVPNTheLinkUnderneathIsNamedToo() throws {
        var e = StateEvent(state: .online, previous: .unknown, since: 0, interface: "wg0", kind: .vpn,
                           reason: "probe answered in 12 ms", sequence: 1)
        e.underneath = "wlan0"
        e.underneathKind = .wifi
        #expect(StatusFormat.plainLine(e, now: 0, duration: false) == "online via wg0 (vpn) over wlan0 (wifi): probe answered in 12 ms")
        // It survives the state file; a line without it (no VPN) has no such field.
        let line = JSONText.object(e)
        #expect(line.hasSuffix(#","underneath":"wlan0","underneath_kind":"wifi"}"#))
        #expect(try #require(StateRecord.parseEvent(Array(line.utf8))).event == e)
        e.underneath = ""
        e.underneathKind = .none
        #expect(!JSONText.object(e).contains("underneath"))
    }

    @Test func theConnectionSurvivesTheStateFile() throws {
        let e = event(connection: "Café \"Zum Löwen\"", metered: true)
        let parsed = try #require(StateRecord.parseEvent(Array(JSONText.object(e).utf8)))
        #expect(parsed.event == e)
        // A file an older daemon wrote has no connection: it still reads.
        var old = e
        old.connection = ""
        let withoutField = JSONText.object(old).replacing(",\"connection\":\"\"", with: "")
        #expect(StateRecord.parseEvent(Array(withoutField.utf8))?.event == old)
    }
}
