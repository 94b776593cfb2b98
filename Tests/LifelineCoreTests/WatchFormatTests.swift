import Foundation
import LifelineCore
import LifelineProtocol
import Testing

struct WatchFormatTests {
    let offline = StateEvent(
        state: .offline, previous: .online, since: 1_700_000_000_000_000, interface: "wlan0", kind: .wifi,
        reason: "default route via \"wlan0\" removed", rttMs: -1, metered: false, sequence: 7)
    let now: Int64 = 1_700_000_133_000_000

    private func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    @Test func argumentsNameTheFourFormatsOrATemplate() {
        #expect(WatchFormat(argument: "plain") == .plain)
        #expect(WatchFormat(argument: "json") == .json)
        #expect(WatchFormat(argument: "i3bar") == .i3bar)
        #expect(WatchFormat(argument: "waybar") == .waybar)
        #expect(WatchFormat(argument: "{icon} {state}") == .template("{icon} {state}"))
        #expect(WatchFormat(argument: "waybr") == nil)
        #expect(WatchFormat(argument: "") == nil)
    }

    @Test func plainIsASentenceWithoutDuration() {
        #expect(WatchFormat.plain.line(offline, now: now) == #"offline via wlan0 (wifi): default route via "wlan0" removed"#)
        #expect(WatchFormat.plain.header.isEmpty)
    }

    @Test func jsonCarriesEveryField() throws {
        let o = try object(WatchFormat.json.line(offline, now: now))
        #expect(o["state"] as? String == "offline")
        #expect(o["previous"] as? String == "online")
        #expect(o["reason"] as? String == offline.reason)
        #expect((o["sequence"] as? NSNumber)?.intValue == 7)
        #expect(Set(o.keys) == Set(StateEvent.CodingKeys.allCases.map(\.rawValue)))
    }

    @Test func waybarHasTextTooltipClassAndAlt() throws {
        let o = try object(WatchFormat.waybar.line(offline, now: now))
        #expect(o["text"] as? String == "○ offline")
        #expect(o["class"] as? String == "offline")
        #expect(o["alt"] as? String == "offline")
        #expect(o["tooltip"] as? String == #"offline via wlan0 (wifi): default route via "wlan0" removed"#)
        #expect(WatchFormat.waybar.header.isEmpty)
        for state in ConnectivityState.allCases {
            var e = offline
            e.state = state
            #expect(try object(WatchFormat.waybar.line(e, now: now))["class"] as? String == state.rawValue)
        }
    }

    @Test func i3barIsAHeaderThenOneArrayElementPerLine() throws {
        #expect(WatchFormat.i3bar.header == [#"{"version":1}"#, "["])
        let header = try object(WatchFormat.i3bar.header[0])
        #expect(header["version"] as? Int == 1)
        var online = offline
        online.state = .online
        let lines = [offline, online].map { WatchFormat.i3bar.line($0, now: now) }
        for line in lines { #expect(line.hasPrefix("[{") && line.hasSuffix("}],"), "\(line)") }
        // Header's "[" + the lines + a closing element is one JSON array of status lines.
        let stream = "[\n" + lines.joined(separator: "\n") + "[]]"
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(stream.utf8)) as? [[[String: Any]]])
        #expect(parsed[0][0]["full_text"] as? String == "○ offline")
        #expect(parsed[0][0]["color"] as? String == StatusFormat.color(.offline))
        #expect(parsed[0][0]["urgent"] as? Bool == true)
        #expect(parsed[1][0]["full_text"] as? String == "● online")
        #expect(parsed[1][0]["urgent"] as? Bool == false)
    }

    @Test func noDaemonIsUnknownWithAReason() throws {
        let o = try object(WatchFormat.waybar.line(nil, now: now))
        #expect(o["class"] as? String == "unknown")
        #expect((o["tooltip"] as? String)?.contains("not running") == true)
    }

    @Test func templateUsesStatusFields() {
        #expect(WatchFormat.template("{icon} {state} {interface} {duration}").line(offline, now: now) == "○ offline wlan0 2m 13s")
    }

    @Test func everyStateHasItsOwnIconAndColour() {
        let states = ConnectivityState.allCases
        #expect(Set(states.map(StatusFormat.icon)).count == states.count)
        #expect(Set(states.map(StatusFormat.color)).count == states.count)
        for icon in states.map(StatusFormat.icon) { #expect(icon.count == 1) }
    }

    @Test func escapeAppliesToValuesNotTheTemplate() {
        let text = StatusFormat.render("#[bold]{reason}", offline, now: now) { $0.replacingOccurrences(of: "\"", with: "'") }
        #expect(text == "#[bold]default route via 'wlan0' removed")
    }
}

struct StateRecordTests {
    @Test func readsWhatTheDaemonWrites() {
        let e = StateEvent(
            state: .portal, previous: .online, since: 1_700_000_000_123_456, interface: "wlan0", kind: .wifi,
            reason: "redirect to \"login\"\n\\ ünï 🙂", rttMs: 23.5, metered: true, sequence: 42)
        let text = JSONText.object(e, extra: [("pid", "1234"), ("muted_until", "99")]) + "\n"
        let record = StateRecord.parse(Array(text.utf8))
        #expect(record == StateRecord(event: e, pid: 1234, mutedUntil: 99))
    }

    @Test func acceptsEscapesAndNestedExtras() {
        let text = #"{"state":"online","previous":"unknown","since":1,"interface":"e\u0074h0","kind":"","reason":"a\ud83d\ude42b\/","rtt_ms":-1,"metered":false,"sequence":0,"pid":7,"future":{"x":[1,"}"]}}"#
        let record = StateRecord.parse(Array(text.utf8))
        #expect(record?.event.interface == "eth0")
        #expect(record?.event.reason == "a🙂b/")
        #expect(record?.pid == 7)
    }

    @Test(arguments: [
        "", "{", "[]", "{}", "null",
        #"{"state":"online"}"#,
        #"{"state":"sideways","previous":"unknown","since":1,"interface":"","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":0,"pid":7}"#,
        #"{"state":"online","previous":"unknown","since":"1","interface":"","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":0,"pid":7}"#,
        #"{"state":"online","previous":"unknown","since":1,"interface":"","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":0,"pid":0}"#,
        #"{"state":"online","previous":"unknown","since":1,"interface":"","kind":"","reason":"\x","rtt_ms":-1,"metered":false,"sequence":0,"pid":7}"#,
        #"{"state":"online","previous":"unknown","since":1,"interface":"","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":0,"pid":7} trailing"#,
        #"{"state":"online","previous":"unknown","since":1,"interface":"","kind":"","reason":"\ud83d","rtt_ms":-1,"metered":false,"sequence":0,"pid":7}"#,
    ])
    func rejectsAnythingElse(_ text: String) {
        #expect(StateRecord.parse(Array(text.utf8)) == nil)
    }
}
