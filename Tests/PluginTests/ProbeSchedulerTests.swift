import Clocks
import LifelineCore
import Synchronization
import Testing

@testable import ProbeMonitor

/// The probe's timing rules, first on the pure plan, then on the
/// driver with swift-clocks' `TestClock`.
@Suite struct ProbePlanTests {
    func at(_ seconds: Double) -> Moment { Moment(offset: .milliseconds(Int64(seconds * 1000))) }

    /// Steps simulated time in 10 ms ticks; probes take `duration` and return `result(n)`.
    /// `triggers` are (time, cause) pairs. Returns (start time, cause) of every probe.
    func simulate(
        until end: Double, interval: Duration = .seconds(30), duration: Double = 0,
        triggers: [(Double, ProbeCause)] = [], result: (Int) -> Bool? = { _ in true }
    ) -> [(Double, ProbeCause)] {
        var plan = ProbePlan(interval: interval)
        var started: [(Double, ProbeCause)] = []
        var runningUntil: Double?
        var pendingTriggers = triggers.sorted { $0.0 < $1.0 }
        var tick = 0
        while Double(tick) / 100 <= end {
            let now = Double(tick) / 100
            while let first = pendingTriggers.first, first.0 <= now {
                _ = plan.trigger(first.1)
                pendingTriggers.removeFirst()
            }
            if let until = runningUntil, until <= now {
                plan.finish(at: at(now), online: result(started.count - 1))
                runningUntil = nil
            }
            if runningUntil == nil, let cause = plan.start(at: at(now)) {
                #expect(!started.contains { $0.0 == now }, "two probes at \(now)")
                started.append((now, cause))
                runningUntil = now + duration
                if duration == 0 {
                    plan.finish(at: at(now), online: result(started.count - 1))
                    runningUntil = nil
                }
            }
            tick += 1
        }
        return started
    }

    @Test func onlineProbesOncePerInterval() {
        let starts = simulate(until: 95).map(\.0)
        #expect(starts == [0, 30, 60, 90])
    }

    @Test func notOnlineRampsFromOneSecondDoublingToTheInterval() {
        let starts = simulate(until: 125, result: { _ in false }).map(\.0)
        #expect(starts == [0, 1, 3, 7, 15, 31, 61, 91, 121])
    }

    @Test func rampDelaysCountFromTheEndOfASlowFailedProbe() {
        // 5 s timeouts: start, fail at 5, retry 1 s later, fail at 11, 2 s later …
        let starts = simulate(until: 40, duration: 5, result: { _ in false }).map(\.0)
        #expect(starts == [0, 6, 13, 22, 35])
    }

    @Test func answerAfterFailuresGoesBackToTheInterval() {
        let starts = simulate(until: 70, result: { $0 >= 3 }).map(\.0)
        #expect(starts == [0, 1, 3, 7, 37, 67])
    }

    @Test func abandonedProbesKeepTheRampFromGrowing() {
        let starts = simulate(until: 5, result: { _ in nil }).map(\.0)
        #expect(starts == [0, 1, 2, 3, 4, 5])
    }

    @Test func triggerProbesAtOnce() {
        let probes = simulate(until: 40, triggers: [(12.5, .request)])
        #expect(probes.map(\.0) == [0, 12.5, 42.5].filter { $0 <= 40 })
        #expect(probes[1].1 == .request)
    }

    @Test func stormOfTriggersCostsOneProbePerSecond() {
        // 1000 triggers in 10 s (one per 10 ms tick).
        let storm = (0..<1000).map { (5 + Double($0) / 100, ProbeCause.request) }
        let starts = simulate(until: 14.5, triggers: storm).map(\.0)
        #expect(starts == [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    }

    @Test func triggerDuringAProbeWaitsForItsEnd() {
        // A probe takes 3 s; a trigger at 1 s runs right after it, never beside it.
        let probes = simulate(until: 10, duration: 3, triggers: [(1, .request), (1.5, .request)])
        #expect(probes.map(\.0) == [0, 3])
        #expect(probes[1].1 == .request)
    }

    @Test func stallEvidenceIsNotOverwrittenByAPlainRequest() {
        var plan = ProbePlan(interval: .seconds(30))
        var preempt = plan.trigger(.stall("eth0 sent packets but received none for 3s"))
        #expect(!preempt)
        preempt = plan.trigger(.request)
        #expect(!preempt)
        #expect(plan.start(at: at(0)) == .stall("eth0 sent packets but received none for 3s"))
        #expect(plan.due == nil, "no second probe while one is in flight")
        preempt = plan.trigger(.request)
        #expect(!preempt, "a request waits for the probe under way")
        preempt = plan.trigger(.resumed)
        #expect(preempt, "answers again: abandon the probe under way")
    }

    @Test func aProbeSkippedForWantOfARouteNeitherDelaysTheNextNorSchedulesOne() {
        var plan = ProbePlan(interval: .seconds(30))
        _ = plan.start(at: at(0))
        plan.finish(at: at(0.1), online: true)
        // The route goes away at 10 s; a check request finds nothing to probe.
        _ = plan.trigger(.request)
        #expect(plan.start(at: at(10)) == .request)
        plan.skip(at: at(10))
        #expect(plan.due == nil, "nothing to wake up for until the route is back")
        #expect(plan.online == false)
        // The route is back 300 ms later: probed at once.
        _ = plan.trigger(.pathChanged)
        #expect(plan.due == at(1))
        #expect(plan.start(at: at(10.3)) == .pathChanged)
    }

    @Test func aStallDuringAProbeAbandonsItAndProbesAtOnce() {
        var plan = ProbePlan(interval: .seconds(30))
        #expect(plan.start(at: at(0)) == .schedule)
        plan.finish(at: at(0), online: true)
        #expect(plan.start(at: at(30)) == .schedule)
        // The upstream died just before; the stall is seen 300 ms into the probe.
        let abandon = plan.trigger(.stall("eth0 sent packets but received none for 3s"))
        #expect(abandon)
        plan.finish(at: at(30.3), online: nil)
        #expect(plan.start(at: at(30.3)) == .stall("eth0 sent packets but received none for 3s"))
    }

    @Test func aRouteReportedAsSeveralChangesProbesTheLastWithoutWaitingASecond() {
        var plan = ProbePlan(interval: .seconds(30))
        _ = plan.start(at: at(0))
        plan.finish(at: at(0), online: true)
        // The route comes back at 10 s as two changes 20 ms apart: the probe for
        // the first is abandoned by the second, whose probe starts 250 ms after it.
        _ = plan.trigger(.pathChanged)
        #expect(plan.start(at: at(10)) == .pathChanged)
        let abandon = plan.trigger(.pathChanged)
        #expect(abandon)
        plan.finish(at: at(10.02), online: nil)
        #expect(plan.start(at: at(10.2)) == nil)
        #expect(plan.start(at: at(10.25)) == .pathChanged)
        // A storm of changes still costs at most four probes a second, and a
        // plain request after a probe with a verdict waits the whole second.
        plan.finish(at: at(10.3), online: true)
        _ = plan.trigger(.request)
        #expect(plan.start(at: at(11)) == nil)
        #expect(plan.start(at: at(11.25)) == .request)
    }

    @Test func answersArrivingAfterAStallProbeAtOnce() {
        var plan = ProbePlan(interval: .seconds(30))
        _ = plan.start(at: at(0))
        plan.finish(at: at(5), online: false)
        #expect(plan.start(at: at(6)) == .schedule)
        // Answers arrive 300 ms into the ramp's probe: it is abandoned, and the
        // next starts then, not a second after the abandoned one started.
        let abandon = plan.trigger(.resumed)
        #expect(abandon)
        plan.finish(at: at(6.3), online: nil)
        #expect(plan.start(at: at(6.3)) == .resumed)
    }
}

@Suite struct ProbeSchedulerTests {
    /// Lets tasks woken by the test clock run (they hop between threads).
    func settle() async {
        for _ in 0..<20 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    final class Recorder: Sendable {
        let starts = Mutex<[Duration]>([])
        let running = Atomic<Int>(0)
        let maxRunning = Atomic<Int>(0)
    }

    @Test func drivesThePlanWithAnInjectedClock() async {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let recorder = Recorder()
        let origin = clock.now
        let task = Task {
            await scheduler.run { _ in
                recorder.starts.withLock { $0.append(origin.duration(to: clock.now)) }
                return true
            }
        }
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero])
        await clock.advance(by: .seconds(29))
        await settle()
        #expect(recorder.starts.withLock { $0.count } == 1)
        await clock.advance(by: .seconds(1))
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero, .seconds(30)])
        // A trigger wakes the sleeping scheduler without any time passing.
        await clock.advance(by: .seconds(5))
        scheduler.trigger(.request)
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero, .seconds(30), .seconds(35)])
        task.cancel()
        await task.value
    }

    @Test func aMeteredLinkIsProbedEveryMeteredIntervalWhileOnline() async {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30), meteredInterval: .seconds(300))
        let recorder = Recorder()
        let origin = clock.now
        let task = Task {
            await scheduler.run { _ in
                recorder.starts.withLock { $0.append(origin.duration(to: clock.now)) }
                // The monitor reads Metered once a round, as NetworkManager says it.
                scheduler.setMetered(true)
                return true
            }
        }
        await settle()
        await clock.advance(by: .seconds(299))
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero])
        await clock.advance(by: .seconds(1))
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero, .seconds(300)])
        task.cancel()
        await task.value
    }

    @Test func resumedAbandonsAProbeWaitingOutItsTimeout() async {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let recorder = Recorder()
        let origin = clock.now
        let task = Task {
            await scheduler.run { cause in
                recorder.starts.withLock { $0.append(origin.duration(to: clock.now)) }
                if cause == .resumed { return true }
                // A blackholed probe: waits out its 5 s timeout unless cancelled.
                do { try await clock.sleep(for: .seconds(5)) } catch { return nil }
                return false
            }
        }
        await settle()
        await clock.advance(by: .seconds(2))
        scheduler.trigger(.resumed)
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero, .seconds(2)])
        #expect(scheduler.plan.online == true)
        task.cancel()
        await clock.advance(by: .seconds(60))
        await task.value
    }

    @Test func noRouteMeansNoWakeUpsAndTheRouteReturningProbesAtOnce() async {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let recorder = Recorder()
        let origin = clock.now
        let routed = Atomic<Bool>(false)
        let task = Task {
            await scheduler.run { _ in
                recorder.starts.withLock { $0.append(origin.duration(to: clock.now)) }
                return routed.load(ordering: .sequentiallyConsistent) ? true : nil
            }
        }
        await settle()
        for _ in 0..<20 {
            await clock.advance(by: .milliseconds(500))
            await settle()
        }
        #expect(recorder.starts.withLock { $0 } == [.zero], "no probe runs (or is skipped) while there is no route")
        await clock.advance(by: .milliseconds(200))
        routed.store(true, ordering: .sequentiallyConsistent)
        scheduler.trigger(.pathChanged)
        await settle()
        #expect(recorder.starts.withLock { $0 } == [.zero, .milliseconds(10200)])
        #expect(scheduler.plan.online == true)
        task.cancel()
        await task.value
    }

    @Test func neverTwoProbesInFlight() async {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let recorder = Recorder()
        let task = Task {
            await scheduler.run { _ in
                let n = recorder.running.add(1, ordering: .sequentiallyConsistent).newValue
                recorder.maxRunning.max(n, ordering: .sequentiallyConsistent)
                recorder.starts.withLock { $0.append(.zero) }
                try? await clock.sleep(for: .seconds(3))
                recorder.running.subtract(1, ordering: .sequentiallyConsistent)
                return false
            }
        }
        await settle()
        for _ in 0..<10 {
            for _ in 0..<50 { scheduler.trigger(.request) }
            await clock.advance(by: .milliseconds(500))
            await settle()
        }
        // 5 s of clock: probes at 0 and 3 (each 3 s), despite 500 triggers.
        #expect(recorder.maxRunning.load(ordering: .sequentiallyConsistent) == 1)
        #expect(recorder.starts.withLock { $0.count } == 2)
        task.cancel()
        await clock.advance(by: .seconds(10))
        await task.value
    }
}
