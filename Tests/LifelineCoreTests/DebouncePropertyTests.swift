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
            let result = Self.simulate(Self.steps(numbers), down: .seconds(2), up: .seconds(1))
            for p in result.published {
                // The decided key at every moment of [p.at - window, p.at) was p.key (a change at
                // exactly p.at comes after the timer that published).
                let windowStart = p.at.advanced(by: .zero - p.window)
                let before = result.decided.last { $0.at <= windowStart }
                let within = result.decided.filter { $0.at > windowStart && $0.at < p.at }
                let heldAtStart = p.window == .zero || before?.key == p.key
                #expect(heldAtStart && within.allSatisfy { $0.key == p.key },
                        "\(p.key) published at \(p.at.offset) without holding for \(p.window)")
            }
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
