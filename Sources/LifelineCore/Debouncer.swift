/// Dedup and debounce (docs/design.md) as a pure state machine: it is fed verdicts
/// and instants and says what to publish. It never reads a clock itself, so tests
/// drive it with any `InstantProtocol` (swift-clocks' `TestClock` among them).
///
/// Rules:
/// - A change of `state` or `interface` (the verdict's key) is a transition.
/// - Trouble while `online` is published once the connection has been degraded
///   for `down` in total without ever being back for `up` in a row: a single
///   flap shorter than `down` publishes nothing, while a cable that flaps faster
///   than either window (down 150 ms, up 50 ms, for ten seconds) is one outage,
///   not silence. The published state is the newest degraded one.
/// - A recovery to `online` must hold for `up` uninterrupted; any other change
///   (within an outage, or of the interface) must hold for its window (`up` for a
///   change to `online`, `down` otherwise) uninterrupted.
/// - From `unknown` (start-up), `online` is published at once; any other state
///   must hold for `down`.
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

    /// What one observation publishes: nothing, one output or two, in order
    /// (a change that falls due, then the new verdict's own); never `.none`.
    public typealias Outputs = [Output]

    public var down: Duration
    public var up: Duration
    /// What was last published (`unknown` before anything was).
    public private(set) var published: Verdict = Verdict(state: .unknown)
    /// A different verdict waiting for its window (strict: reset by any change).
    private var candidate: (verdict: Verdict, since: Instant)?
    /// Trouble while online that has not (yet) added up to `down`.
    private var trouble: Trouble?

    private struct Trouble: Sendable {
        var start: Instant
        /// Degraded time before the current run.
        var degradedBefore: Duration = .zero
        /// Set while degraded now; `backSince` while online again.
        var degradedSince: Instant?
        var backSince: Instant?
        var newestDegraded: Verdict
        /// The newest online verdict while back, and since when its key holds.
        var newestOnline: (verdict: Verdict, since: Instant)?
    }

    public init(down: Duration, up: Duration) {
        self.down = down
        self.up = up
    }

    /// When something will be due, if anything is pending.
    public var deadline: Instant? {
        if let t = trouble {
            if let since = t.degradedSince { return since.advanced(by: down - t.degradedBefore) }
            if let back = t.backSince { return back.advanced(by: up) }
        }
        return candidate.map { $0.since.advanced(by: window(for: $0.verdict)) }
    }

    /// The verdict waiting to be published, if any.
    public var pending: Verdict? {
        if let t = trouble { return t.degradedSince != nil ? t.newestDegraded : t.newestOnline?.verdict }
        return candidate?.verdict
    }

    /// How long a strict candidate must hold.
    public func window(for verdict: Verdict) -> Duration {
        if verdict.state == .online { return published.state == .unknown ? .zero : up }
        return down
    }

    /// Feeds the verdict decided at `now`. Returns what to publish, in order
    /// (nothing, one output, or two): whatever fell due at this very instant is
    /// published first, as the timer would have, and then the verdict itself may
    /// be published at once (a window of zero, or an attribute change).
    public mutating func observe(_ verdict: Verdict, at now: Instant) -> Outputs {
        [tick(at: now), take(verdict, at: now)].filter { $0 != .none }
    }

    /// Nothing can be decided now (reachability is being measured again on a new
    /// path): the published verdict stands, and a change still waiting for its
    /// window is dropped, because the evidence for it is gone.
    public mutating func hold(at now: Instant) -> Outputs {
        observe(published, at: now)
    }

    private mutating func take(_ verdict: Verdict, at now: Instant) -> Output {
        if published.state == .online, verdict.state.isDegraded || trouble != nil {
            return observeTrouble(verdict, at: now)
        }
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

    private mutating func observeTrouble(_ verdict: Verdict, at now: Instant) -> Output {
        candidate = nil
        if trouble == nil { trouble = Trouble(start: now, degradedSince: now, newestDegraded: verdict) }
        // Updated in place: a copy of the trouble (two verdicts) costs more than the
        // rest of an observation, and a flapping link sends one after another.
        if verdict.state.isDegraded {
            if trouble!.backSince != nil {
                trouble!.backSince = nil
                trouble!.degradedSince = now
            }
            trouble!.newestDegraded = verdict
        } else {
            if let since = trouble!.degradedSince {
                trouble!.degradedBefore += since.duration(to: now)
                trouble!.degradedSince = nil
                trouble!.backSince = now
            }
            if let since = trouble!.newestOnline?.since, trouble!.newestOnline?.verdict.key == verdict.key {
                trouble!.newestOnline = (verdict, since)
            } else {
                trouble!.newestOnline = (verdict, now)
            }
        }
        return tick(at: now)
    }

    /// Publishes the candidate at once, window or not: for a check the user asked
    /// for explicitly ("Check now"), where waiting would only look broken.
    public mutating func flush(at now: Instant) -> Output {
        if let t = trouble {
            trouble = nil
            if t.degradedSince != nil { return publish(t.newestDegraded, heldSince: t.start) }
            guard let online = t.newestOnline else { return .none }
            return online.verdict.key == published.key ? settleBack(online, at: now) : publish(online.verdict, heldSince: online.since)
        }
        guard let c = candidate else { return .none }
        candidate = nil
        return publish(c.verdict, heldSince: c.since)
    }

    /// Publishes whatever is due at `now`.
    public mutating func tick(at now: Instant) -> Output {
        // The trouble and the candidate are read in place and moved out only when
        // due: a copy of either (verdicts, strings and all) on every tick cost as
        // much as the rest of a publication.
        if trouble != nil {
            if let since = trouble!.degradedSince, trouble!.degradedBefore + since.duration(to: now) >= down {
                let t = trouble.take()!
                return publish(t.newestDegraded, heldSince: t.start)
            }
            if let back = trouble!.backSince, back.duration(to: now) >= up {
                let t = trouble.take()!
                return t.newestOnline.map { settleBack($0, at: now) } ?? .none
            }
            return .none
        }
        guard let since = candidate?.since,
              since.advanced(by: window(for: candidate!.verdict)) <= now,
              let c = candidate.take()
        else { return .none }
        return publish(c.verdict, heldSince: c.since)
    }

    /// The trouble passed without an outage. An online verdict with another
    /// interface is a transition of its own, due once it has held `up`.
    private mutating func settleBack(_ online: (verdict: Verdict, since: Instant), at now: Instant) -> Output {
        if online.verdict.key == published.key {
            guard online.verdict != published else { return .none }
            published = online.verdict
            return .attributes(online.verdict)
        }
        candidate = online
        return tick(at: now)
    }

    private mutating func publish(_ verdict: Verdict, heldSince: Instant) -> Output {
        published = verdict
        return .transition(verdict, heldSince: heldSince)
    }
}
