/// The machine's sleeps as the bus saw them (the logind monitor's "about to
/// sleep" and "resumed"), in wall-clock time. Every update carries it whole, so
/// the event log can write each sleep down even when updates coalesce while
/// its disk is busy: a sleep and its wake that came between two writes are
/// both still here.
public struct SleepRecord: Sendable, Equatable {
    /// How many sleeps began since the daemon started; the one going on, or the
    /// last one, has this number.
    public var count: UInt64 = 0
    /// When that sleep began (µs since the epoch); nil before the first.
    public var began: Int64?
    /// When it ended; nil while the machine sleeps.
    public var ended: Int64?

    public init() {}

    public var isAsleep: Bool { began != nil && ended == nil }

    /// Notes whether the machine sleeps now; true when that changed.
    public mutating func note(sleeping: Bool, at now: Int64) -> Bool {
        guard sleeping != isAsleep else { return false }
        if sleeping {
            count += 1
            began = now
            ended = nil
        } else {
            ended = max(now, began ?? now)
        }
        return true
    }
}
