import LifelineCore
import PropertyBased
import Testing

/// Properties of dedup and debounce over random observation sequences and
/// random windows, zero included. The oracle (`DebounceRule`) is written from
/// the rule in docs/design.md, in discrete 10 ms time, independently of the
/// `Debouncer` it checks.
@Suite struct DebouncePropertyTests {
    struct Step {
        var delay: Duration
        var key: Verdict.Key
    }

    static let states: [ConnectivityState] = [.offline, .limited, .portal, .online]

    /// Each generated number encodes one step: a delay of 0–2990 ms (on the
    /// 10 ms grid the oracle uses), a state, an interface.
    static func steps(_ numbers: [Int]) -> [Step] {
        numbers.map { n in
            let state = states[(n / 300) % 4]
            let iface = state == .offline ? "" : ["eth0", "wlan0"][(n / 1200) % 2]
            return Step(delay: .milliseconds((n % 300) * 10), key: Verdict.Key(state: state, interface: iface))
        }
    }

    static let stepGen = Gen.int(in: 0...2399).array(of: 1...60)
    /// A window of 0–3000 ms on the 10 ms grid; one in six is zero.
    static let windowGen = Gen.int(in: 0...359).map { n in Duration.milliseconds(n < 60 ? 0 : (n - 60) * 10) }

    struct Publication: Equatable, CustomStringConvertible {
        var at: Duration
        var key: Verdict.Key
        var description: String { "\(key.state.rawValue)/\(key.interface)@\(at)" }
    }

    /// Replays the steps through a `Debouncer`, firing its timer at each deadline
    /// (`timerDelay` late, as a busy machine may) the way the bus does, and
    /// applying every output it returns.
    static func simulate(_ steps: [Step], down: Duration, up: Duration, timerDelay: Duration = .zero) -> [Publication] {
        var d = Debouncer<Moment>(down: down, up: up)
        var now = Moment(offset: .zero)
        var published: [Publication] = []
        func record(_ outputs: Debouncer<Moment>.Outputs) {
            for case .transition(let v, _) in outputs { published.append(Publication(at: now.offset, key: v.key)) }
        }
        func advance(to t: Moment) {
            while let due = d.deadline?.advanced(by: timerDelay), due <= t {
                now = due
                record([d.tick(at: due)])
            }
            now = t
        }
        for step in steps {
            advance(to: now.advanced(by: step.delay))
            record(d.observe(Verdict(state: step.key.state, interface: step.key.interface), at: now))
        }
        advance(to: now.advanced(by: .seconds(60)))
        return published
    }

    @Test func publishesExactlyWhatTheRuleSays() async {
        await propertyCheck(count: 400, input: Self.stepGen, Self.windowGen, Self.windowGen) { numbers, down, up in
            let steps = Self.steps(numbers)
            let expected = DebounceRule(down: down, up: up).run(steps)
            let got = Self.simulate(steps, down: down, up: up)
            #expect(got == expected, "down \(down) up \(up)")
        }
    }

    @Test func aLateTimerChangesWhenButNotWhat() async {
        // The timer fires late and observations arrive before it: what fell due is
        // published first, then the new observation is taken — nothing is lost.
        await propertyCheck(count: 400, input: Self.stepGen, Self.windowGen, Self.windowGen, Gen.int(in: 1...3000)) {
            numbers, down, up, lateMs in
            let steps = Self.steps(numbers)
            let expected = DebounceRule(down: down, up: up).run(steps).map(\.key)
            let got = Self.simulate(steps, down: down, up: up, timerDelay: .milliseconds(lateMs)).map(\.key)
            #expect(got == expected, "down \(down) up \(up) late \(lateMs) ms")
        }
    }

    @Test func zeroWindowsLoseNoTransition() async {
        // With both windows zero every change of key is published at once.
        await propertyCheck(count: 300, input: Self.stepGen) { numbers in
            let steps = Self.steps(numbers)
            var expected: [Verdict.Key] = []
            for step in steps where expected.last != step.key { expected.append(step.key) }
            #expect(Self.simulate(steps, down: .zero, up: .zero).map(\.key) == expected)
        }
    }

    @Test func neverPublishesTheSameStateTwiceInARow() async {
        await propertyCheck(count: 300, input: Self.stepGen, Self.windowGen, Self.windowGen) { numbers, down, up in
            let published = Self.simulate(Self.steps(numbers), down: down, up: up)
            for (a, b) in zip(published, published.dropFirst()) {
                #expect(a.key != b.key, "published \(a.key) twice in a row")
            }
        }
    }

    @Test func theLastDecidedStateIsEventuallyPublished() async {
        await propertyCheck(count: 300, input: Self.stepGen, Self.windowGen, Self.windowGen) { numbers, down, up in
            let steps = Self.steps(numbers)
            #expect(Self.simulate(steps, down: down, up: up).last?.key == steps.last?.key)
        }
    }

    @Test func aSingleFlapShorterThanDownNeverAlerts() async {
        // Online, then one degraded spell shorter than `down`, then online for good.
        await propertyCheck(count: 300, input: Gen.int(in: 1...1999), Gen.int(in: 0...2)) { ms, s in
            let states: [ConnectivityState] = [.offline, .limited, .portal]
            let steps = [
                Step(delay: .zero, key: .init(state: .online, interface: "eth0")),
                Step(delay: .seconds(1), key: .init(state: states[s], interface: states[s] == .offline ? "" : "eth0")),
                Step(delay: .milliseconds(ms), key: .init(state: .online, interface: "eth0")),
            ]
            #expect(Self.simulate(steps, down: .seconds(2), up: .seconds(1)).map(\.key.state) == [.online])
        }
    }

    /// A debouncer whose timer is late (the bus's timer task had not run yet when
    /// the next observation arrived) still publishes both the due change and the
    /// new one when a window is zero.
    @Test func aLateTimerWithAZeroWindowPublishesBothChanges() {
        let t0 = Moment(offset: .zero)
        let online = Verdict(state: .online, interface: "eth0")
        let limited = Verdict(state: .limited, interface: "eth0")
        var up0 = Debouncer<Moment>(down: .seconds(2), up: .zero)
        _ = up0.observe(online, at: t0)
        _ = up0.observe(limited, at: t0.advanced(by: .seconds(1)))
        let late = up0.observe(online, at: t0.advanced(by: .seconds(3)))
        #expect(late.count == 2)
        #expect(late.first == .transition(limited, heldSince: t0.advanced(by: .seconds(1))))
        #expect(up0.published == online)

        var down0 = Debouncer<Moment>(down: .zero, up: .seconds(1))
        _ = down0.observe(online, at: t0)
        _ = down0.observe(limited, at: t0.advanced(by: .seconds(1)))
        _ = down0.observe(online, at: t0.advanced(by: .seconds(2)))
        let again = down0.observe(limited, at: t0.advanced(by: .seconds(4)))
        let states = again.compactMap { output -> ConnectivityState? in
            if case .transition(let v, _) = output { return v.state }
            return nil
        }
        #expect(states == [.online, .limited])
        #expect(down0.published == limited)
    }
}

/// The debounce rule, step by step in 10 ms ticks:
/// - From `unknown`, `online` is published at once; another state once it has
///   held `down` without a change.
/// - While `online` is published: trouble starts when the decided state turns
///   degraded. It is published (the newest degraded state) once degraded time
///   since trouble started adds up to `down` while degraded; it ends quietly when
///   `online` has held `up` since it was last degraded. A move to `online` on
///   another interface, outside trouble, must hold `up` without a change.
/// - While a degraded state is published: a change must hold without a change
///   for `up` (to `online`) or `down` (to anything else).
struct DebounceRule {
    var down: Duration
    var up: Duration
    let tick = Duration.milliseconds(10)

    func run(_ steps: [DebouncePropertyTests.Step]) -> [DebouncePropertyTests.Publication] {
        var changes: [(at: Duration, key: Verdict.Key)] = []
        var t = Duration.zero
        for step in steps {
            t += step.delay
            changes.append((t, step.key))
        }
        let end = t + .seconds(60)

        var published = Verdict.Key(state: .unknown, interface: "")
        var out: [DebouncePropertyTests.Publication] = []
        var decided: Verdict.Key?
        var decidedSince = Duration.zero
        var inTrouble = false
        var degradedTotal = Duration.zero
        var lastBackOnline = Duration.zero
        var next = 0

        func publish(_ key: Verdict.Key, at now: Duration) {
            published = key
            out.append(.init(at: now, key: key))
            inTrouble = false
        }
        func due(at now: Duration) {
            guard let d = decided else { return }
            if published.state == .unknown {
                if d.state == .online || now - decidedSince >= down { publish(d, at: now) }
            } else if published.state == .online {
                if inTrouble {
                    if d.state.isDegraded, degradedTotal >= down {
                        publish(d, at: now)
                    } else if d.state == .online, now - lastBackOnline >= up {
                        inTrouble = false
                    }
                }
                if !inTrouble, d != published, d.state == .online, now - decidedSince >= up {
                    publish(d, at: now)
                }
            } else if d != published {
                let window = d.state == .online ? up : down
                if now - decidedSince >= window { publish(d, at: now) }
            }
        }

        var now = Duration.zero
        while now <= end {
            due(at: now)
            while next < changes.count, changes[next].at == now {
                let key = changes[next].key
                next += 1
                if key != decided {
                    if decided?.state.isDegraded == true, key.state == .online { lastBackOnline = now }
                    decided = key
                    decidedSince = now
                }
                if published.state == .online, key.state.isDegraded, !inTrouble {
                    inTrouble = true
                    degradedTotal = .zero
                }
                due(at: now)
            }
            if inTrouble, decided?.state.isDegraded == true { degradedTotal += tick }
            now += tick
        }
        return out
    }
}
