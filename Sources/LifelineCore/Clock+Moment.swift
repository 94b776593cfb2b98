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
