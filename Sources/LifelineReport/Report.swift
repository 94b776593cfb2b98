import LifelineCore
import LifelineFormats

/// What `history --report` shows, worked out from the log: the span, its
/// days and weeks, their tallies, and the outages with their causes. The page
/// (`ReportPage`), the CSV and the JSON are all written from this one value,
/// so their numbers cannot disagree.
public struct Report: Sendable {
    public let timeline: Timeline
    /// From the start of the span to now.
    public let window: Range<Int64>
    public let rows: [OutageRow]
    /// The local days drawn, oldest first, each cut to the window.
    public let days: [Day]
    public let weeks: [Week]
    /// Round trips and retransmissions by hour of the day, from the log's quality lines.
    public var qualityHours: [QualityHour] = []

    public struct Day: Sendable {
        /// Local midnight, and the next one.
        public var start: Int64
        public var end: Int64
        public var tally: Tally
    }

    public struct Week: Sendable {
        /// Local midnight of its Monday.
        public var start: Int64
        public var days: [Day]
        public var tally: Tally
        /// The outages that began in it (or were going on when the span began).
        public var rows: [OutageRow]
    }

    /// Without `since`, the report covers today and the 29 days before: the month
    /// an argument with a provider is usually about. Days before the log's first
    /// line are not drawn.
    public static let defaultDays = 30

    public init(_ contents: EventLog.Contents, now: Int64, since: Duration? = nil) {
        let timeline = Timeline(contents, now: now)
        var from = LocalDays.midnight(of: now, plusDays: -(Self.defaultDays - 1))
        if let since {
            let (cutoff, overflow) = now.subtractingReportingOverflow(since.microseconds)
            from = overflow ? 0 : max(0, cutoff)
        }
        from = min(from, now)
        self.init(timeline: timeline, window: from..<max(from, now))
        qualityHours = QualityHour.hours(contents.qualities, window: window)
    }

    public init(timeline: Timeline, window: Range<Int64>) {
        self.timeline = timeline
        self.window = window
        rows = OutageRow.rows(timeline, window: window)
        // Days from the first one that holds both the window and the log.
        var days: [Day] = []
        let firstShown = max(window.lowerBound, timeline.recordStart ?? window.upperBound)
        var day = LocalDays.midnight(of: min(firstShown, window.upperBound))
        while day < window.upperBound || days.isEmpty {
            let next = max(LocalDays.midnight(of: day, plusDays: 1), day + 1)
            let span = max(day, window.lowerBound)..<max(max(day, window.lowerBound), min(next, window.upperBound))
            days.append(Day(start: day, end: next, tally: timeline.tally(span)))
            day = next
        }
        self.days = days
        var weeks: [Week] = []
        var rowIndex = 0
        for d in days {
            let monday = LocalDays.midnight(of: d.start, plusDays: -((LocalDays.weekday(d.start) + 6) % 7))
            if weeks.last?.start != monday { weeks.append(Week(start: monday, days: [], tally: Tally(), rows: [])) }
            weeks[weeks.count - 1].days.append(d)
            weeks[weeks.count - 1].tally = weeks[weeks.count - 1].tally + d.tally
            while rowIndex < rows.count, rows[rowIndex].start < d.end {
                weeks[weeks.count - 1].rows.append(rows[rowIndex])
                rowIndex += 1
            }
        }
        if rowIndex < rows.count, !weeks.isEmpty { weeks[weeks.count - 1].rows += rows[rowIndex...] }
        self.weeks = weeks
    }

    /// The whole span's tally.
    public var tally: Tally { days.reduce(Tally()) { $0 + $1.tally } }

    /// Outages and downtime per cause, in the order of `Cause.allCases`, only those that occur.
    public static func causes(_ rows: some Sequence<OutageRow>) -> [(cause: Cause, count: Int, downtime: Int64)] {
        var count: [Cause: Int] = [:]
        var downtime: [Cause: Int64] = [:]
        for row in rows {
            count[row.cause, default: 0] += 1
            downtime[row.cause, default: 0] += row.duration
        }
        return Cause.allCases.compactMap { c in count[c].map { (c, $0, downtime[c] ?? 0) } }
    }
}
