import Foundation
import LifelineCore
import LifelineFormats
import Testing

struct WatchFormatTests {
    let offline = StateEvent(
        state: .offline, previous: .online, since: 1_700_000_000_000_000, interface: "wlan0", kind: .wifi,
        reason: "default route via \"wlan0\" removed", rttMs: -1, metered: false, sequence: 7)
    let now: Int64 = 1_700_000_133_000_000

    private func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    /// Only a shown duration makes the line change on its own: redrawn when the
    /// shown number changes (seconds in the first hour, then minutes), never otherwise.
    @Test func onlyAShownDurationAsksForARedraw() {
        let template = WatchFormat(argument: "{state} for {duration}")!
        // 133.000 s after `since`: the next second.
        #expect(template.refreshAfterMs(offline, now: now) == 1000)
        #expect(template.refreshAfterMs(offline, now: now + 250_000) == 750)
        // Past the hour, "1h 2m" changes at the next whole minute.
        let later = offline.since + 3_725_000_000
        #expect(template.refreshAfterMs(offline, now: later) == 55_000)
        #expect(template.refreshAfterMs(nil, now: now) == nil)
        for format in [WatchFormat.plain, .json, .i3bar, .waybar, WatchFormat(argument: "{state} {reason}")!] {
            #expect(format.refreshAfterMs(offline, now: now) == nil, "\(format)")
        }
    }

    /// `watch` names a VPN's link underneath as `status` does, and its JSON carries it.
    @Test func throughAVPNTheLinkUnderneathIsNamed() throws {
        var e = StateEvent(state: .online, previous: .limited, since: 1_700_000_000_000_000, interface: "wg0", kind: .vpn,
                           reason: "probe answered in 20 ms", rttMs: 20, metered: false, sequence: 8)
        (e.underneath, e.underneathKind) = ("wlan0", .wifi)
        let plain = WatchFormat.plain.line(e, now: now, translator: .english)
        #expect(plain.contains("via wg0 (vpn) over wlan0 (wifi)"), "\(plain)")
        let json = try object(WatchFormat.json.line(e, now: now))
        #expect(json["underneath"] as? String == "wlan0")
        #expect(json["underneath_kind"] as? String == "wifi")
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
        // Pango markup: the quotes of a value are entities.
        #expect(o["tooltip"] as? String == #"offline via wlan0 (wifi): default route via &quot;wlan0&quot; removed"#)
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

/// Reasons a third-party monitor, a captive portal or a crafted file could put
/// in front of a user, each with what a terminal must print for it.
enum Nasty {
    static let megabyte = String(repeating: "ab&<", count: 256 * 1024)
    static let terminal: [(value: String, shown: String)] = [
        ("<b>x</b>", "<b>x</b>"),
        ("<span color=red>", "<span color=red>"),
        (#"<a href="https://phish/">x</a>"#, #"<a href="https://phish/">x</a>"#),
        ("a&b", "a&b"),
        ("#(touch /tmp/pwned)", "#(touch /tmp/pwned)"),
        ("#{pane_id}", "#{pane_id}"),
        ("#[fg=red]", "#[fg=red]"),
        ("%Y %s 100%", "%Y %s 100%"),
        ("\u{1b}]0;title\u{07}", "^[]0;title^G"),
        ("\u{1b}[2J", "^[[2J"),
        ("line\nbreak\ttab\r\u{7f}", "line^Jbreak^Itab^M^?"),
        ("\u{9b}31m eight-bit CSI", "M-^[31m eight-bit CSI"),
        ("bad \u{FFFD} UTF-8", "bad \u{FFFD} UTF-8"),
        (megabyte, megabyte),
    ]
}

struct TerminalSurfaceTests {
    let now: Int64 = 1_700_000_133_000_000

    func event(reason: String, interface: String = "wlan0") -> StateEvent {
        StateEvent(state: .offline, previous: .online, since: 1_700_000_000_000_000, interface: interface, kind: .wifi,
                   reason: reason, rttMs: -1, metered: false, sequence: 7)
    }

    @Test func controlCharactersAreShownAsCatDoesEverythingElseAsIs() {
        for (value, shown) in Nasty.terminal {
            #expect(TerminalText.visible(value) == shown, "\(value.prefix(40).debugDescription)")
        }
    }

    /// `status` (the plain line and templates), `watch` plain and templates print
    /// every value with its control characters visible; the user's own template
    /// may hold escape sequences (colours) and keeps them.
    @Test func statusAndWatchLinesShowValuesLiterally() {
        for (value, shown) in Nasty.terminal {
            let e = event(reason: value, interface: "e\u{1b}[1mth0")
            let expected = "offline via e^[[1mth0 (wifi): " + shown
            #expect(WatchFormat.plain.line(e, now: now) == expected)
            #expect(StatusFormat.output(e, format: nil, json: false, now: now) == "offline via e^[[1mth0 (wifi) for 2m 13s: " + shown)
            #expect(WatchFormat.template("\u{1b}[31m{reason}\u{1b}[0m").line(e, now: now) == "\u{1b}[31m" + shown + "\u{1b}[0m")
            #expect(StatusFormat.output(e, format: "{interface}|{reason}", json: false, now: now) == "e^[[1mth0|" + shown)
        }
    }

    /// waybar reads `text` and `tooltip` as Pango markup: values are entities,
    /// never tags. The line stays one valid JSON object whatever the value.
    @Test func waybarEscapesMarkupInTextAndTooltip() throws {
        for (value, shown) in Nasty.terminal {
            let line = WatchFormat.waybar.line(event(reason: value), now: now)
            #expect(!line.contains("\n"))
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let tooltip = try #require(o["tooltip"] as? String)
            let markup = shown.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
                .replacingOccurrences(of: "'", with: "&#39;")
            #expect(tooltip == "offline via wlan0 (wifi): " + markup, "\(value.prefix(40).debugDescription)")
            #expect(!tooltip.unicodeScalars.contains { $0 == "<" || $0 == ">" || TerminalText.isControl($0) })
        }
        #expect(WatchFormat.markup(#"<a href="x">&'"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
    }

    /// i3bar and swaybar take `full_text` as plain text when the block says
    /// `markup: none`: shown as it is, with control characters visible.
    @Test func i3barBlocksAreUnmarkedPlainText() throws {
        for (value, shown) in Nasty.terminal {
            let line = WatchFormat.i3bar.line(event(reason: value, interface: value), now: now)
            let blocks = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast().utf8)) as? [[String: Any]])
            #expect(blocks[0]["markup"] as? String == "none")
            #expect(blocks[0]["full_text"] as? String == "○ offline")
            let custom = WatchFormat.template("{reason}").line(event(reason: value), now: now)
            #expect(custom == shown)
        }
    }

    /// `since` comes from a file other programs can write: no value traps.
    @Test func durationOfAnySinceIsAnAnswer() {
        for since in [Int64.min, Int64.min + 1, -1, 0, now, now + 1, Int64.max] {
            var e = event(reason: "r")
            e.since = since
            _ = StatusFormat.render("{duration} {since}", e, now: now)
            _ = StatusFormat.render("{duration}", e, now: Int64.min)
            _ = StatusFormat.render("{duration}", e, now: Int64.max)
        }
        #expect(StatusFormat.elapsed(since: Int64.min, now: now) == .microseconds(Int64.max))
        #expect(StatusFormat.elapsed(since: Int64.max, now: -5) == .zero)
        #expect(StatusFormat.elapsed(since: now + 5, now: now) == .zero)
        #expect(StatusFormat.elapsed(since: now - 5, now: now) == .microseconds(5))
        var old = event(reason: "r")
        old.since = Int64.min
        #expect(StatusFormat.render("{duration}", old, now: now) == "2562047788h")
    }

    @Test func minutesForSurfacesRefreshedOnceAMinute() {
        #expect(StatusFormat.minutes(.seconds(59)) == "<1m")
        #expect(StatusFormat.minutes(.seconds(60)) == "1m")
        #expect(StatusFormat.minutes(.seconds(3599)) == "59m")
        #expect(StatusFormat.minutes(.seconds(3600)) == "1h")
        #expect(StatusFormat.minutes(.seconds(7500)) == "2h 5m")
        #expect(StatusFormat.minutes(.microseconds(Int64.max)) == "2562047788h")
    }
}

@Suite struct JSONTextTests {
    /// Controls a terminal could act on never leave as raw bytes, C1 included
    /// (U+009B is the one-byte ESC [ on some terminals).
    @Test func everyControlCharacterIsEscaped() {
        let quoted = JSONText.quote("a\u{1b}]0;x\u{07}b\u{7f}\u{9b}2Jc\u{85}")
        #expect(quoted == #""a\u001b]0;x\u0007b\u007f\u009b2Jc\u0085""#)
        #expect(!quoted.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

}
