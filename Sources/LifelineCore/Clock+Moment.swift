import Glibc

/// Elapsed time since a bus started, as an instant the `Debouncer` can use.
/// The bus takes any `Clock<Duration>` (the continuous clock, or swift-clocks'
/// `TestClock` in tests) and measures everything as offsets from its start.
public struct Moment: InstantProtocol, Sendable {
    public var offset: Duration
    public init(offset: Duration) { self.offset = offset }
    public func advanced(by duration: Duration) -> Moment { Moment(offset: offset + duration) }
    public func duration(to other: Moment) -> Duration { other.offset - offset }
    public static func < (lhs: Moment, rhs: Moment) -> Bool { lhs.offset < rhs.offset }
}

/// A clock with its instants erased to `Moment`, so the bus needs no generic parameter.
public struct TimeSource: Sendable {
    public let now: @Sendable () -> Moment
    public let sleep: @Sendable (_ until: Moment) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { Moment(offset: origin.duration(to: clock.now)) }
        sleep = { try await clock.sleep(until: origin.advanced(by: $0.offset), tolerance: nil) }
    }
}

/// Wall-clock time (the state's `since`), microseconds since the Unix epoch.
public enum WallClock {
    public static func micros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

extension Duration {
    /// Whole microseconds, for converting debounce spans into wall-clock offsets.
    public var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    public var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
