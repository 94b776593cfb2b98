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
}
