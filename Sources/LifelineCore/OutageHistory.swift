/// Outages recovered from a list of published transitions (the event log), for
/// `lifeline history`. An outage runs from a published degradation to the next
/// published `online`; a daemon restart in the middle does not split it.
public struct OutageRecord: Sendable, Equatable {
    public var start: Int64
    /// Nil while it lasts.
    public var end: Int64?
    public var worst: ConnectivityState
    public var reason: String

    public init(start: Int64, end: Int64?, worst: ConnectivityState, reason: String) {
        self.start = start
        self.end = end
        self.worst = worst
        self.reason = reason
    }

    /// Never negative, and saturating: the times come from a file anyone could have edited.
    public func duration(now: Int64) -> Duration {
        let (micros, overflow) = (end ?? now).subtractingReportingOverflow(start)
        return .microseconds(overflow ? Int64.max : max(0, micros))
    }
}

/// One degraded state from the time it was published until the next published
/// state: the pieces an outage is made of, for drawing it hour by hour.
public struct DegradedSpan: Sendable, Equatable {
    public var start: Int64
    /// Nil while it lasts.
    public var end: Int64?
    public var state: ConnectivityState

    public init(start: Int64, end: Int64?, state: ConnectivityState) {
        self.start = start
        self.end = end
        self.state = state
    }
}

public enum OutageHistory {
    public static func outages(from events: [StateEvent]) -> [OutageRecord] {
        var result: [OutageRecord] = []
        var open: OutageRecord?
        for e in events {
            if e.state.isDegraded {
                if var o = open {
                    o.worst = min(o.worst, e.state)
                    open = o
                } else {
                    open = OutageRecord(start: e.since, end: nil, worst: e.state, reason: e.reason)
                }
            } else if e.state == .online, var o = open {
                o.end = e.since
                result.append(o)
                open = nil
            }
        }
        if let open { result.append(open) }
        return result
    }

    /// The degraded stretches of the log, in order. An `unknown` (a daemon that
    /// started again) neither ends nor starts one, as it does not split an outage.
    /// A time earlier than the one before it (a clock set back, an edited file)
    /// makes the earlier stretch empty instead of negative.
    public static func degradedSpans(from events: [StateEvent]) -> [DegradedSpan] {
        var result: [DegradedSpan] = []
        var open: DegradedSpan?
        for e in events where e.state != .unknown {
            if var o = open {
                o.end = max(o.start, e.since)
                result.append(o)
                open = nil
            }
            if e.state.isDegraded { open = DegradedSpan(start: e.since, end: nil, state: e.state) }
        }
        if let open { result.append(open) }
        return result
    }

    /// The worst state during `range` (µs since the epoch), counting a span
    /// without an end as lasting until `now`; nil when nothing degraded overlaps it.
    public static func worstState(in range: Range<Int64>, spans: [DegradedSpan], now: Int64) -> ConnectivityState? {
        var worst: ConnectivityState?
        for span in spans {
            let end = span.end ?? max(span.start, now)
            // A span of no length (a state that lasted no time at all) still counts
            // when it falls inside: it was published, so it happened.
            let overlaps = span.start < range.upperBound && (end > range.lowerBound || (end == span.start && span.start >= range.lowerBound))
            if overlaps { worst = min(worst ?? span.state, span.state) }
        }
        return worst
    }
}

/// The figures under `history --chart`: how many outages touched a window, how
/// long the connection was down in it, the longest piece of one, and the share
/// of the recorded time it was up.
public struct OutageSummary: Sendable, Equatable {
    public var outages: Int
    /// Microseconds of outage inside the window.
    public var downtime: Int64
    /// When the outage with the most time inside the window began; nil without outages.
    public var longestStart: Int64?
    /// That outage's time inside the window (µs).
    public var longest: Int64
    /// Microseconds of the window the log covers (from its first line on).
    public var recorded: Int64

    /// `window` ends at now. Time before `recordStart` (the first line of the log)
    /// is not counted for or against availability: nothing was recorded then.
    public init(outages records: [OutageRecord], window: Range<Int64>, recordStart: Int64?) {
        let from = max(window.lowerBound, recordStart ?? window.upperBound)
        let now = window.upperBound
        recorded = max(0, now - min(from, now))
        outages = 0
        downtime = 0
        longest = 0
        for o in records {
            let start = max(o.start, from)
            let end = min(o.end ?? now, now)
            // An outage that ended exactly where the window starts is not in it;
            // one that began and ended in the same instant inside it is.
            guard o.start < now, (o.end ?? now) > from || (o.end == o.start && o.start >= from) else { continue }
            let inside = max(0, end - start)
            outages += 1
            // Saturating: an edited log can make outages overlap, many times over.
            let (sum, overflow) = downtime.addingReportingOverflow(inside)
            downtime = overflow ? .max : sum
            if longestStart == nil || inside > longest { (longestStart, longest) = (o.start, inside) }
        }
    }

    /// Availability in hundredths of a percent, rounded down, and below 100.00%
    /// whenever there was any downtime at all; nil when nothing was recorded.
    public var availabilityHundredths: Int64? {
        guard recorded > 0 else { return nil }
        let up = recorded - min(downtime, recorded)
        // Milliseconds keep the product far from overflow for any window a log can hold.
        let share = (up / 1000) * 10_000 / max(1, recorded / 1000)
        return downtime > 0 ? min(9_999, share) : 10_000
    }
}
