import LifelineCore

/// One line of the report's table of outages, and of `history --csv` and
/// `--json`: a run of time down between two times up, or cut short by sleep
/// or a stopped daemon (which are not counted as down).
public struct OutageRow: Sendable, Equatable {
    /// How the outage ended.
    public enum Ending: String, Sendable {
        /// `online` was published.
        case online
        /// The machine went to sleep.
        case asleep
        /// The daemon stopped.
        case stopped
        /// The log says nothing more (it begins again with a mark).
        case unknown
        /// Still going now.
        case ongoing
    }

    public var start: Int64
    /// Now, while it lasts.
    public var end: Int64
    public var ending: Ending
    public var worst: ConnectivityState
    /// The layer that failed first, as the log names it; empty when it does not say.
    public var layer: Diagnosis
    public var cause: Cause { Cause(layer) }
    public var reason: String

    public var duration: Int64 { end - start }

    /// The runs of `down` segments of `timeline` that touch `window`, cut to it:
    /// an outage that began before the window is counted from its start.
    public static func rows(_ timeline: Timeline, window: Range<Int64>) -> [OutageRow] {
        var rows: [OutageRow] = []
        var open: OutageRow?
        func close(_ ending: Ending) {
            guard var row = open else { return }
            open = nil
            row.ending = ending
            let from = max(row.start, window.lowerBound)
            let to = min(row.end, window.upperBound)
            // An outage of no length still counts where it falls inside.
            guard from < to || (row.start == row.end && row.start >= window.lowerBound && row.start < window.upperBound)
            else { return }
            row.start = from
            row.end = max(from, to)
            rows.append(row)
        }
        for segment in timeline.segments {
            guard case .down(let state) = segment.activity else {
                switch segment.activity {
                case .up: close(.online)
                case .asleep: close(.asleep)
                case .notRunning: close(.stopped)
                default: close(.unknown)
                }
                continue
            }
            if var row = open {
                row.end = segment.end
                row.worst = min(row.worst, state)
                if row.layer == .none { row.layer = segment.diagnosis }
                if row.reason.isEmpty { row.reason = segment.reason }
                open = row
            } else {
                open = OutageRow(start: segment.start, end: segment.end, ending: .ongoing, worst: state,
                                 layer: segment.diagnosis, reason: segment.reason)
            }
        }
        close(.ongoing)
        return rows
    }
}
