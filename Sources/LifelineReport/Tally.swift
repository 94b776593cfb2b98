/// Time in each activity inside a span (µs): what a day's or a week's
/// availability is made of. Time asleep, not running or not recorded counts
/// neither for nor against it.
public struct Tally: Sendable, Equatable {
    public var up: Int64 = 0
    public var down: Int64 = 0
    public var asleep: Int64 = 0
    public var notRunning: Int64 = 0
    /// Before the log's first line, or while the log said nothing of the state.
    public var notRecorded: Int64 = 0

    public init() {}

    /// The segments' time inside `span`; the part of `span` they do not cover
    /// (before the log begins, after now) is not recorded.
    public init(_ segments: ArraySlice<Segment>, span: Range<Int64>) {
        var covered: Int64 = 0
        for s in segments {
            let length = min(s.end, span.upperBound) - max(s.start, span.lowerBound)
            guard length > 0 else { continue }
            covered += length
            switch s.activity {
            case .up: up += length
            case .down: down += length
            case .asleep: asleep += length
            case .notRunning: notRunning += length
            case .unknown: notRecorded += length
            }
        }
        notRecorded += max(0, span.upperBound - span.lowerBound - covered)
    }

    public static func + (a: Tally, b: Tally) -> Tally {
        var t = a
        t.up += b.up
        t.down += b.down
        t.asleep += b.asleep
        t.notRunning += b.notRunning
        t.notRecorded += b.notRecorded
        return t
    }

    /// The share of the watched time (up or down) the connection was up, in
    /// hundredths of a percent, rounded down, and below 100.00% whenever it was
    /// down at all; nil when it was never watched.
    public var availabilityHundredths: Int64? {
        let watched = up + down
        guard watched > 0 else { return nil }
        // Milliseconds keep the product far from overflow.
        let share = (up / 1000) * 10_000 / max(1, watched / 1000)
        return down > 0 ? min(9_999, share) : 10_000
    }

    /// "99.52%"; "—" when nothing was watched.
    public var availabilityText: String {
        guard let h = availabilityHundredths else { return "—" }
        return "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)%"
    }
}

extension Timeline {
    /// The segments that overlap `span`, found by binary search (they are in order).
    public func segments(overlapping span: Range<Int64>) -> ArraySlice<Segment> {
        var low = 0, high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].end <= span.lowerBound && segments[mid].start < span.lowerBound { low = mid + 1 } else { high = mid }
        }
        var end = low
        while end < segments.count, segments[end].start < span.upperBound { end += 1 }
        return segments[low..<end]
    }

    public func tally(_ span: Range<Int64>) -> Tally { Tally(segments(overlapping: span), span: span) }
}
