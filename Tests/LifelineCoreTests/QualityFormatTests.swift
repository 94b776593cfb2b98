import Foundation
import LifelineCore
import LifelineFormats
import Testing

/// The quality attribute on the surfaces that read files and print lines:
/// the state file and log JSON, `status --format {quality}`, waybar, the log's quality marks.
struct QualityFormatTests {
    static let quality = Quality(level: .poor, rttMs: 1234.56, retransmitShare: 0.1234, connections: 6, remotes: 3,
                                 dnsFailures: 0, probeRttMs: 20, reason: "12.3 % of segments retransmitted")

    static var online: StateEvent {
        var e = StateEvent(state: .online, previous: .limited, since: 1_700_000_000_000_000, interface: "eth0", kind: .ethernet,
                           reason: "probe answered in 20 ms", rttMs: 20, sequence: 9)
        e.quality = quality
        return e
    }

    @Test func theStateFileCarriesItAndReadsItBack() throws {
        let text = JSONText.object(Self.online, extra: [("pid", "12"), ("muted_until", "0")])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["quality"] as? String == "poor")
        let details = try #require(json["quality_details"] as? [String: Any])
        #expect(details["rtt_ms"] as? Double == 1234.6)
        #expect(details["retransmit_share"] as? Double == 0.1234)
        let back = try #require(StateRecord.parse(Array(text.utf8)))
        var expected = Self.quality
        expected.rttMs = 1234.6
        #expect(back.event.quality == expected)
    }

    @Test func withoutAQualityTheLineIsAsBefore() {
        var e = Self.online
        e.quality = nil
        #expect(!JSONText.object(e).contains("quality"))
        #expect(StatusFormat.render("{state} {quality}", e, now: 0) == "online ")
    }

    @Test func statusFormatAndWaybarShowTheLevel() throws {
        #expect(StatusFormat.render("{icon} {quality}", Self.online, now: 0) == "● poor")
        let line = WatchFormat.waybar.line(Self.online, now: 0, translator: .english)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(json["class"] as? [String] == ["online", "poor"])
        #expect((json["tooltip"] as? String)?.contains("quality poor: 1235 ms, 12.3 % retransmitted") == true)
    }

    @Test func craftedDetailsAreRefused() {
        let bad = #"{"state":"online","previous":"unknown","since":1,"interface":"e","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":1,"pid":7,"quality":"good","quality_details":{"retransmit_share":7}}"#
        #expect(StateRecord.parse(Array(bad.utf8))?.event.quality == nil)
        #expect(Quality.parse(level: .good, details: Array(#"{"connections":-3}"#.utf8)) == nil)
    }

    @Test func theLogWritesEachNewValueOnceAsAMark() {
        var writer = QualityMarkWriter()
        var update = Update(event: Self.online, isTransition: false)
        let mark = writer.mark(for: update, now: 5)
        let back = mark.flatMap { QualityMark.parse(Array($0.line.utf8)) }
        #expect(back?.at == 5 && back?.quality.level == .poor && back?.quality.rttMs == 1234.6)
        #expect(writer.mark(for: update, now: 6) == nil, "the same value again")
        update.event.quality?.level = .good
        #expect(writer.mark(for: update, now: 7)?.quality.level == .good)
        update.event.quality = nil
        #expect(writer.mark(for: update, now: 8) == nil)
        #expect(LogMark.parse(Array(mark!.line.utf8)) == nil, "transition readers skip it")
    }
}
