/// Dedup and debounce of SPEC §3 as a pure state machine: it is fed verdicts
/// and instants and says what to publish. It never reads a clock itself, so tests
/// drive it with any `InstantProtocol` (swift-clocks' `TestClock` among them).
///
/// Rules:
/// - A change of `state` or `interface` (the verdict's key) is a transition; it is
///   published only after the new key held, uninterrupted, for its window: `up`
///   for a change to `online`, `down` for anything else.
/// - From `unknown` (start-up), `online` is published at once; any other state
///   must hold for `down` like a degradation.
/// - Attribute-only changes of the published key (reason, rtt, kind, metered)
///   are passed on at once as `.attributes`, never as a transition.
public struct Debouncer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public enum Output: Equatable, Sendable {
        case none
        /// Same state and interface as published; other attributes changed.
        case attributes(Verdict)
        /// A new state or interface that held for its window, since `heldSince`.
        case transition(Verdict, heldSince: Instant)
    }

    public var down: Duration
    public var up: Duration
    /// What was last published (`unknown` before anything was).
    public private(set) var published: Verdict = Verdict(state: .unknown)
    private var candidate: (verdict: Verdict, since: Instant)?

    public init(down: Duration, up: Duration) {
        self.down = down
        self.up = up
    }

    /// When the pending candidate will be due, if there is one.
    public var deadline: Instant? {
        candidate.map { $0.since.advanced(by: window(for: $0.verdict)) }
    }

    /// The state waiting for its window, if any.
    public var pending: Verdict? { candidate?.verdict }

    public func window(for verdict: Verdict) -> Duration {
        if verdict.state == .online { return published.state == .unknown ? .zero : up }
        return down
    }

    /// Feeds the verdict decided at `now`.
    public mutating func observe(_ verdict: Verdict, at now: Instant) -> Output {
        if verdict.key == published.key {
            candidate = nil
            guard verdict != published else { return .none }
            published = verdict
            return .attributes(verdict)
        }
        if let c = candidate, c.verdict.key == verdict.key {
            candidate = (verdict, c.since)  // keep the start, take the newest attributes
        } else {
            candidate = (verdict, now)
        }
        return tick(at: now)
    }

    /// Publishes the candidate at once, window or not: for a check the user asked
    /// for explicitly ("Check now"), where waiting would only look broken.
    public mutating func flush(at now: Instant) -> Output {
        guard let c = candidate else { return .none }
        candidate = nil
        published = c.verdict
        return .transition(c.verdict, heldSince: c.since)
    }

    /// Publishes the candidate if its window has passed at `now`.
    public mutating func tick(at now: Instant) -> Output {
        guard let c = candidate, let due = deadline, due <= now else { return .none }
        candidate = nil
        published = c.verdict
        return .transition(c.verdict, heldSince: c.since)
    }
}
