import LifelineCore
import Testing

/// The arithmetic under `history --chart`: which state an hour shows, and the
/// summary's figures, including for logs no daemon would write.
@Suite struct OutageHistoryTests {
    func event(_ state: ConnectivityState, at since: Int64) -> StateEvent {
        StateEvent(state: state, previous: .unknown, since: since, sequence: 1)
    }

    @Test func spansFollowEachPublishedStateAndSurviveARestart() {
        let spans = OutageHistory.degradedSpans(from: [
            event(.online, at: 0), event(.limited, at: 10), event(.unknown, at: 15), event(.offline, at: 20),
            event(.online, at: 30), event(.portal, at: 40),
        ])
        #expect(spans == [
            DegradedSpan(start: 10, end: 20, state: .limited), DegradedSpan(start: 20, end: 30, state: .offline),
            DegradedSpan(start: 40, end: nil, state: .portal),
        ])
    }

    @Test func anHourShowsTheWorstStateThatTouchedIt() {
        let spans = [DegradedSpan(start: 10, end: 20, state: .limited), DegradedSpan(start: 20, end: 30, state: .offline),
                     DegradedSpan(start: 50, end: 50, state: .portal), DegradedSpan(start: 90, end: nil, state: .portal)]
        #expect(OutageHistory.worstState(in: 0..<10, spans: spans, now: 100) == nil)
        #expect(OutageHistory.worstState(in: 0..<11, spans: spans, now: 100) == .limited)
        #expect(OutageHistory.worstState(in: 15..<25, spans: spans, now: 100) == .offline)
        #expect(OutageHistory.worstState(in: 30..<40, spans: spans, now: 100) == nil)
        #expect(OutageHistory.worstState(in: 40..<60, spans: spans, now: 100) == .portal)
        #expect(OutageHistory.worstState(in: 95..<100, spans: spans, now: 100) == .portal)
    }

    @Test func summaryCountsOnlyTheWindowAndTheRecordedTime() {
        let outages = [
            OutageRecord(start: 0, end: 100, worst: .offline, reason: ""),
            OutageRecord(start: 500, end: 800, worst: .limited, reason: ""),
            OutageRecord(start: 900, end: nil, worst: .portal, reason: ""),
        ]
        // The window starts at 50, the log at 0: half of the first outage counts.
        let s = OutageSummary(outages: outages, window: 50..<1_000, recordStart: 0)
        #expect(s.outages == 3)
        #expect(s.downtime == 50 + 300 + 100)
        #expect(s.longestStart == 500 && s.longest == 300)
        #expect(s.recorded == 950)
        // A log that begins at 400 leaves the first outage out, and the time before it.
        let later = OutageSummary(outages: Array(outages.dropFirst()), window: 50..<1_000, recordStart: 400)
        #expect(later.recorded == 600 && later.downtime == 400)
        #expect(OutageSummary(outages: [], window: 0..<10, recordStart: nil).availabilityHundredths == nil)
    }

    @Test func availabilityRoundsDownAndAnyDowntimeShows() {
        let day: Int64 = 86_400_000_000
        let one = OutageSummary(outages: [OutageRecord(start: 0, end: 1, worst: .offline, reason: "")], window: 0..<day, recordStart: 0)
        #expect(one.availabilityHundredths == 9_999)
        let none = OutageSummary(outages: [], window: 0..<day, recordStart: 0)
        #expect(none.availabilityHundredths == 10_000)
        let third = OutageSummary(outages: [OutageRecord(start: 0, end: day / 3, worst: .offline, reason: "")], window: 0..<day, recordStart: 0)
        #expect(third.availabilityHundredths == 6_666)
    }

    /// An edited log can overlap outages a thousand times over the same years:
    /// the sum saturates instead of trapping.
    @Test func overlappingCraftedOutagesDoNotOverflow() {
        let end: Int64 = 253_402_300_799_999_999
        let outages = Array(repeating: OutageRecord(start: 0, end: end, worst: .offline, reason: ""), count: 1000)
        let s = OutageSummary(outages: outages, window: 0..<end, recordStart: 0)
        #expect(s.downtime == .max)
        #expect(s.availabilityHundredths == 0)
    }
}
