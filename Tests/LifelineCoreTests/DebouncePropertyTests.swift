import LifelineCore
import PropertyBased
import Testing

/// Properties of dedup and debounce over random observation sequences.
@Suite struct DebouncePropertyTests {
    struct Step {
        var delay: Duration
        var key: Verdict.Key
    }

    static let states: [ConnectivityState] = [.offline, .limited, .portal, .online]

    /// Each generated number encodes one step: a delay of 0–2999 ms, a state, an interface.
    static func steps(_ numbers: [Int]) -> [Step] {
        numbers.map { n in
            let state = states[(n / 3000) % 4]
            let iface = state == .offline ? "" : ["eth0", "wlan0"][(n / 12000) % 2]
            return Step(delay: .milliseconds(n % 3000), key: Verdict.Key(state: state, interface: iface))
        }
    }

    struct Publication {
        var at: Moment
        var key: Verdict.Key
        var window: Duration
    }

    /// Replays the steps through a debouncer, firing its timer exactly at each
    /// deadline the way the bus does. Returns the decided timeline and what was published.
    static func simulate(_ steps: [Step], down: Duration, up: Duration)
        -> (decided: [(at: Moment, key: Verdict.Key)], published: [Publication])
    {
        var d = Debouncer<Moment>(down: down, up: up)
        var now = Moment(offset: .zero)
        var decided: [(Moment, Verdict.Key)] = []
        var published: [Publication] = []
        func record(_ out: Debouncer<Moment>.Output, window: Duration) {
            if case .transition(let v, _) = out { published.append(Publication(at: now, key: v.key, window: window)) }
        }
        func advance(to t: Moment) {
            while let due = d.deadline, due <= t {
                now = due
                let window = d.pending.map { d.window(for: $0) } ?? .zero
                record(d.tick(at: due), window: window)
            }
            now = t
        }
        for step in steps {
            advance(to: now.advanced(by: step.delay))
            let v = Verdict(state: step.key.state, interface: step.key.interface)
            let window = d.window(for: v)
            decided.append((now, step.key))
            record(d.observe(v, at: now), window: window)
        }
        advance(to: now.advanced(by: .seconds(60)))
        return (decided, published)
    }

    @Test func neverPublishesTheSameStateTwiceInARow() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...23999).array(of: 1...80)) { numbers in
            let result = Self.simulate(Self.steps(numbers), down: .seconds(2), up: .seconds(1))
            for (a, b) in zip(result.published, result.published.dropFirst()) {
                #expect(a.key != b.key, "published \(a.key) twice in a row")
            }
        }
    }

    @Test func neverPublishesAStateThatDidNotHoldForItsWindow() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...23999).array(of: 1...80)) { numbers in
            let down = Duration.seconds(2), up = Duration.seconds(1)
            let result = Self.simulate(Self.steps(numbers), down: down, up: up)
            var previous = Verdict.Key(state: .unknown, interface: "")
            for p in result.published {
                if previous.state == .online, p.key.state != .online {
                    // An outage: since online last held `up` in a row, the connection
                    // was degraded for `down` in total, and is degraded now.
                    let since = Self.lastStableOnline(result.decided, before: p.at, up: up)
                    let degraded = Self.degradedTime(result.decided, from: since, to: p.at)
                    #expect(degraded >= down, "\(p.key) published at \(p.at.offset) after only \(degraded) of trouble")
                    #expect(result.decided.last { $0.at < p.at }?.key.state.isDegraded == true)
                } else {
                    // Anything else held, uninterrupted, for its window [p.at - window, p.at)
                    // (a change at exactly p.at comes after the timer that published).
                    let windowStart = p.at.advanced(by: .zero - p.window)
                    let before = result.decided.last { $0.at <= windowStart }
                    let within = result.decided.filter { $0.at > windowStart && $0.at < p.at }
                    let heldAtStart = p.window == .zero || before?.key == p.key
                    #expect(heldAtStart && within.allSatisfy { $0.key == p.key },
                            "\(p.key) published at \(p.at.offset) without holding for \(p.window)")
                }
                previous = p.key
            }
        }
    }

    /// The end of the last run of `online` at least `up` long that ended before `t`
    /// (or the start of the current online run's trouble-free stretch).
    static func lastStableOnline(_ decided: [(at: Moment, key: Verdict.Key)], before t: Moment, up: Duration) -> Moment {
        var stable = Moment(offset: .zero)
        var runStart: Moment?
        for (i, d) in decided.enumerated() where d.at < t {
            let next = i + 1 < decided.count ? min(decided[i + 1].at, t) : t
            if d.key.state == .online {
                if runStart == nil { runStart = d.at }
                if let s = runStart, s.duration(to: next) >= up { stable = next }
            } else {
                runStart = nil
            }
        }
        return stable
    }

    /// Total time the decided state was degraded within [from, to).
    static func degradedTime(_ decided: [(at: Moment, key: Verdict.Key)], from: Moment, to: Moment) -> Duration {
        var total = Duration.zero
        for (i, d) in decided.enumerated() where d.key.state.isDegraded {
            let start = max(d.at, from)
            let end = i + 1 < decided.count ? min(decided[i + 1].at, to) : to
            if start < end { total += start.duration(to: end) }
        }
        return total
    }

    @Test func aSingleFlapShorterThanDownNeverAlerts() async {
        // Online, then one degraded spell shorter than `down`, then online for good.
        await propertyCheck(count: 300, input: Gen.int(in: 1...1999), Gen.int(in: 0...2)) { ms, s in
            let states: [ConnectivityState] = [.offline, .limited, .portal]
            var d = Debouncer<Moment>(down: .seconds(2), up: .seconds(1))
            let t0 = Moment(offset: .zero)
            _ = d.observe(Verdict(state: .online, interface: "eth0"), at: t0)
            _ = d.observe(Verdict(state: states[s]), at: t0.advanced(by: .seconds(1)))
            let back = t0.advanced(by: .seconds(1) + .milliseconds(ms))
            #expect(d.tick(at: back) == .none)
            _ = d.observe(Verdict(state: .online, interface: "eth0"), at: back)
            for step in 1...60 {
                #expect(d.tick(at: back.advanced(by: .milliseconds(50 * step))) == .none)
            }
            #expect(d.published.state == .online)
        }
    }

    @Test func theLastDecidedStateIsEventuallyPublished() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...23999).array(of: 1...60)) { numbers in
            let steps = Self.steps(numbers)
            let result = Self.simulate(steps, down: .seconds(2), up: .seconds(1))
            #expect(result.published.last?.key == steps.last?.key)
        }
    }
}
