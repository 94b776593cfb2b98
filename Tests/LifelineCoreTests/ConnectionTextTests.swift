import LifelineCore
import LifelineProtocol
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
