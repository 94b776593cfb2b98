import LifelineCore
import LifelineReport

/// `history --chart`: one row per local day, one cell per hour shaded by the
/// worst state in that hour, a legend, then the summary. Without colour the
/// shades alone tell the states apart; colour only adds to them.
struct HistoryChart {
    var spans: [DegradedSpan]
    var outages: [OutageRecord]
    /// From the first moment shown to now.
    var window: Range<Int64>
    /// The time of the log's first line: nothing is known before it.
    var recordStart: Int64?
    var colour: Bool

    enum Cell: Equatable {
        /// Outside the window (before its start, after now).
        case blank
        /// Inside the window, before the log begins.
        case notRecorded
        case state(ConnectivityState)
    }

    /// Wide enough for "Mon 2026-11-23" and two spaces.
    private static let labelWidth = 16

    func render() -> String {
        let now = window.upperBound
        var lines = ["History from \(LocalDays.dayAndMinute(window.lowerBound)) to \(LocalDays.dayAndMinute(now)),"
            + " one cell per hour, local time (\(LocalDays.zone(at: now)))"]
        lines.append(pad("") + "00    06    12    18")
        var day = LocalDays.midnight(of: window.lowerBound)
        if let firstRow = Self.firstRow(window: window) { day = firstRow }
        while day < now {
            let hours = LocalDays.hourBoundaries(ofDayAt: day)
            // The spans that touch this day, found once for its 24 cells.
            let today = spans.filter { $0.start < hours[24] && ($0.end ?? now) >= day }
            let cells = (0..<24).map { cell(hours[$0]..<max(hours[$0], hours[$0 + 1]), spans: today) }
            lines.append(pad(LocalDays.dayLabel(day)) + draw(cells))
            // The next midnight, however long this day was.
            day = max(hours[24], day + 1)
        }
        let legend: [(Cell, String)] = [
            (.state(.online), "online"), (.state(.portal), "portal"), (.state(.limited), "limited"),
            (.state(.offline), "offline"), (.notRecorded, "not recorded"),
        ]
        lines.append(pad("") + legend.map { draw([$0.0]) + " " + $0.1 }.joined(separator: "  "))
        lines.append("")
        lines.append(summary())
        return lines.map(trimmingTrailingSpaces).joined(separator: "\n") + "\n"
    }

    /// At most this many rows: a chart of longer spans would scroll past its
    /// own legend, and cost a pass over the log per day.
    static let maxRows = 366

    /// The midnight of the first row when the window holds more than `maxRows`
    /// days (the rows drawn are the last ones); nil when it holds no more.
    static func firstRow(window: Range<Int64>) -> Int64? {
        let latest = LocalDays.midnight(of: window.upperBound, plusDays: -(maxRows - 1))
        return latest > LocalDays.midnight(of: window.lowerBound) ? latest : nil
    }

    func cell(_ hour: Range<Int64>, spans: [DegradedSpan]) -> Cell {
        let from = max(hour.lowerBound, window.lowerBound)
        let to = min(hour.upperBound, window.upperBound)
        guard from < to else { return .blank }
        let recorded = max(from, recordStart ?? to)
        guard recorded < to else { return .notRecorded }
        return .state(OutageHistory.worstState(in: recorded..<to, spans: spans, now: window.upperBound) ?? .online)
    }

    func summary() -> String {
        let s = OutageSummary(outages: outages, window: window, recordStart: recordStart)
        guard let hundredths = s.availabilityHundredths else { return "Nothing was recorded in this span." }
        let availability = "availability \(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)%"
        guard let longestStart = s.longestStart else { return "No outages, \(availability)." }
        let count = s.outages == 1 ? "1 outage" : "\(s.outages) outages"
        return "\(count), down \(DurationText.human(.microseconds(s.downtime))) in all,"
            + " longest \(DurationText.human(.microseconds(s.longest))) (from \(LocalDays.dayAndMinute(longestStart))),"
            + " \(availability)."
    }

    /// Runs of equal cells share one colour sequence.
    private func draw(_ cells: [Cell]) -> String {
        var out = ""
        var index = 0
        while index < cells.count {
            let run = cells[index...].prefix { $0 == cells[index] }
            let glyphs = String(repeating: Self.glyph(cells[index]), count: run.count)
            if colour, let code = Self.colourCode(cells[index]) {
                out += "\u{1B}[\(code)m" + glyphs + "\u{1B}[0m"
            } else {
                out += glyphs
            }
            index += run.count
        }
        return out
    }

    /// Darker for worse, so the chart reads without colour too.
    static func glyph(_ cell: Cell) -> String {
        switch cell {
        case .blank: " "
        case .notRecorded: "·"
        case .state(.online): "░"
        case .state(.portal): "▒"
        case .state(.limited): "▓"
        case .state(.offline), .state(.unknown): "█"
        }
    }

    /// SGR foreground colours: green, magenta, yellow, red, grey.
    static func colourCode(_ cell: Cell) -> Int? {
        switch cell {
        case .blank: nil
        case .notRecorded: 90
        case .state(.online): 32
        case .state(.portal): 35
        case .state(.limited): 33
        case .state(.offline), .state(.unknown): 31
        }
    }

    private func pad(_ s: String) -> String {
        s + String(repeating: " ", count: max(0, Self.labelWidth - s.count))
    }

    /// The hours after now are blank; a line does not end in them.
    private func trimmingTrailingSpaces(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}
