import Clocks
import LifelineCore
import Testing

/// Dedup and debounce on swift-clocks' `TestClock`: no test sleeps.
@Suite struct DebouncerTests {
    typealias Instant = TestClock<Duration>.Instant
    let clock = TestClock()

    func verdict(_ state: ConnectivityState, _ iface: String = "eth0", reason: String = "") -> Verdict {
        Verdict(state: state, interface: state == .offline ? "" : iface, reason: reason)
    }

    /// Feeds (offset, state) pairs and returns what was published, with when.
    func run(_ steps: [(Duration, ConnectivityState)], until end: Duration, down: Duration = .seconds(2), up: Duration = .seconds(1))
        -> [(at: Duration, state: ConnectivityState)]
    {
        var d = Debouncer<Instant>(down: down, up: up)
        let start = clock.now
        var published: [(Duration, ConnectivityState)] = []
        var i = 0
        var t = Duration.zero
        // Step time in 10 ms ticks, as the bus timer would fire.
        while t <= end {
            let now = start.advanced(by: t)
            while i < steps.count, steps[i].0 <= t {
                for case .transition(let v, _) in d.observe(verdict(steps[i].1), at: now) { published.append((t, v.state)) }
                i += 1
            }
            if case .transition(let v, _) = d.tick(at: now) { published.append((t, v.state)) }
            t += .milliseconds(10)
        }
        return published
    }

    @Test func startupOnlineIsPublishedAtOnce() {
        let p = run([(.zero, .online)], until: .seconds(1))
        #expect(p.map(\.state) == [.online])
        #expect(p.first?.at == .zero)
    }

    @Test func startupOfflineMustHoldTheDownWindow() {
        let p = run([(.zero, .offline)], until: .seconds(3))
        #expect(p.map(\.state) == [.offline])
        #expect(p.first?.at == .seconds(2))
    }

    @Test func startupBlipPublishesNoOutage() {
        // Offline for 1.5 s right after start, then online: only `online` is ever published.
        let p = run([(.zero, .offline), (.milliseconds(1500), .online)], until: .seconds(5))
        #expect(p.map(\.state) == [.online])
    }

    @Test func flapShorterThanTheWindowPublishesNothing() {
        let p = run([(.zero, .online), (.seconds(1), .offline), (.milliseconds(2900), .online)], until: .seconds(10))
        #expect(p.map(\.state) == [.online])
    }

    @Test func degradationIsPublishedAfterDownAndRecoveryAfterUp() {
        let p = run([(.zero, .online), (.seconds(1), .offline), (.seconds(10), .online)], until: .seconds(15))
        #expect(p.map(\.state) == [.online, .offline, .online])
        #expect(p[1].at == .seconds(3))
        #expect(p[2].at == .seconds(11))
    }

    @Test func fiftyFlapStormInTenSecondsIsOneOutage() {
        // Online, then the cable flaps 50 times in 10 s (100 ms down, 100 ms up),
        // then stays down, then comes back for good. Recovery never holds `up`,
        // so the degraded time adds up: 2 s of it is reached at 8.9 s.
        var steps: [(Duration, ConnectivityState)] = [(.zero, .online)]
        for n in 0..<50 {
            let t = Duration.seconds(5) + .milliseconds(200 * n)
            steps.append((t, .offline))
            steps.append((t + .milliseconds(100), .online))
        }
        steps.append((.seconds(15), .offline))
        steps.append((.seconds(30), .online))
        let p = run(steps, until: .seconds(35))
        #expect(p.map(\.state) == [.online, .offline, .online])
        #expect(p[1].at == .milliseconds(8900))
        #expect(p[2].at == .seconds(31))
    }

    @Test func aStormThatEndsBeforeDownAddsUpPublishesNothing() {
        // Ten flaps of 100 ms: one second of trouble in all, then stable.
        var steps: [(Duration, ConnectivityState)] = [(.zero, .online)]
        for n in 0..<10 {
            let t = Duration.seconds(5) + .milliseconds(200 * n)
            steps.append((t, .offline))
            steps.append((t + .milliseconds(100), .online))
        }
        #expect(run(steps, until: .seconds(15)).map(\.state) == [.online])
    }

    @Test func troubleIsForgottenOnceOnlineHoldsUp() {
        // 1.5 s down, back for 1 s (trouble forgotten), 1.5 s down again: no outage.
        let steps: [(Duration, ConnectivityState)] = [
            (.zero, .online), (.seconds(1), .offline), (.milliseconds(2500), .online),
            (.milliseconds(3600), .offline), (.milliseconds(5100), .online),
        ]
        #expect(run(steps, until: .seconds(10)).map(\.state) == [.online])
    }

    @Test func recoveryFlapsDuringAnOutageDoNotEndIt() {
        var steps: [(Duration, ConnectivityState)] = [(.zero, .online), (.seconds(1), .offline)]
        for n in 0..<20 {
            let t = Duration.seconds(5) + .milliseconds(400 * n)
            steps.append((t, .online))
            steps.append((t + .milliseconds(300), .offline))  // online never holds 1 s
        }
        let p = run(steps, until: .seconds(20))
        #expect(p.map(\.state) == [.online, .offline])
    }

    @Test func stateChangeWithinAnOutageIsPublished() {
        let p = run([(.zero, .online), (.seconds(1), .offline), (.seconds(5), .portal)], until: .seconds(10))
        #expect(p.map(\.state) == [.online, .offline, .portal])
    }

    @Test func attributeChangesAreNotTransitions() {
        var d = Debouncer<Instant>(down: .seconds(2), up: .seconds(1))
        let t0 = clock.now
        _ = d.observe(Verdict(state: .online, interface: "eth0", rttMs: 10), at: t0)
        let out = d.observe(Verdict(state: .online, interface: "eth0", reason: "faster", rttMs: 5), at: t0.advanced(by: .seconds(1)))
        #expect(out == [.attributes(Verdict(state: .online, interface: "eth0", reason: "faster", rttMs: 5))])
        // The very same verdict again: nothing at all.
        #expect(d.observe(Verdict(state: .online, interface: "eth0", reason: "faster", rttMs: 5), at: t0).isEmpty)
    }

    /// The timer for a recovery had not fired yet when a fresher online
    /// observation arrived: the recovery is published, then the fresh reason and
    /// rtt, so nothing shows the stale ones.
    @Test func aRecoveryIsFollowedByTheObservationThatArrivedWithIt() {
        var d = Debouncer<Instant>(down: .seconds(2), up: .seconds(1))
        let t0 = clock.now
        _ = d.observe(Verdict(state: .offline), at: t0)
        _ = d.tick(at: t0.advanced(by: .seconds(2)))
        let old = Verdict(state: .online, interface: "eth0", reason: "probe answered in 40 ms", rttMs: 40)
        let fresh = Verdict(state: .online, interface: "eth0", reason: "probe answered in 3 ms", rttMs: 3)
        _ = d.observe(old, at: t0.advanced(by: .seconds(3)))
        let out = d.observe(fresh, at: t0.advanced(by: .seconds(5)))
        #expect(out == [.transition(old, heldSince: t0.advanced(by: .seconds(3))), .attributes(fresh)])
        #expect(d.published == fresh)
    }

    @Test func interfaceChangeIsATransition() {
        var d = Debouncer<Instant>(down: .seconds(2), up: .seconds(1))
        let t0 = clock.now
        _ = d.observe(Verdict(state: .online, interface: "wlan0"), at: t0)
        #expect(d.observe(Verdict(state: .online, interface: "eth0"), at: t0).isEmpty)
        guard case .transition(let v, _) = d.tick(at: t0.advanced(by: .seconds(1))) else {
            Issue.record("no transition after the up window")
            return
        }
        #expect(v.interface == "eth0")
    }

    @Test func flushPublishesAPendingCandidateAtOnce() {
        var d = Debouncer<Instant>(down: .seconds(2), up: .seconds(1))
        let t0 = clock.now
        _ = d.observe(verdict(.online), at: t0)
        _ = d.observe(verdict(.offline), at: t0)
        guard case .transition(let v, _) = d.flush(at: t0) else {
            Issue.record("flush did not publish")
            return
        }
        #expect(v.state == .offline)
        #expect(d.deadline == nil)
    }
}
