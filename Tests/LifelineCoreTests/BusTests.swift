import Clocks
import LifelineCore
import LifelinePlatform
import LifelineTestKit
import Synchronization
import Testing

@Suite struct BusTests {
    func observation(_ state: ConnectivityState) -> Observation {
        Observation(role: .reachability, state: state, interface: state == .offline ? "" : "eth0", reason: "test \(state)")
    }

    @Test func debouncedTransitionsReachSinksOnTheTestClock() async throws {
        let clock = TestClock()
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let sink = InMemorySink()
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        defer { task.cancel() }
        let monitor = bus.makeMonitorHandle(name: "test")

        monitor.publish(observation(.online))
        #expect(await eventually { sink.states == [.online] })
        monitor.publish(observation(.offline))
        await clock.advance(by: .milliseconds(1999))
        #expect(sink.states == [.online])
        await clock.advance(by: .milliseconds(1))
        #expect(await eventually { sink.states == [.online, .offline] })
        let offline = sink.transitions[1]
        #expect(offline.previous == .online)
        #expect(offline.sequence == 2)
        #expect(offline.reason == "test offline")

        monitor.publish(observation(.online))
        await clock.advance(by: .seconds(1))
        #expect(await eventually { sink.states == [.online, .offline, .online] })
        #expect(sink.transitions.map(\.sequence) == [1, 2, 3])
    }

    /// A monitor that did not stop when its slot was released (a reload gave up
    /// waiting) publishes late; what it says must not count.
    @Test func aReleasedMonitorNoLongerSpeaks() {
        let bus = Bus(clock: ContinuousClock(), debounce: .init(down: .zero, up: .zero))
        let old = bus.makeMonitorHandle(name: "netlink#0"), new = bus.makeMonitorHandle(name: "netlink#1")
        bus.release(old)
        old.publish(Observation(role: .link, state: .online, interface: "wlan0"))
        new.publish(Observation(role: .link, state: .offline, interface: ""))
        #expect(bus.current.state == .offline)
        #expect(bus.path.interface == nil)
    }

    /// A released slot goes to the next monitor; the ghost of its previous
    /// owner still cannot write into it, nor hold alerts through it.
    @Test func aReusedSlotTakesNothingFromItsPreviousOwner() {
        let bus = Bus(clock: ContinuousClock(), debounce: .init(down: .zero, up: .zero))
        let ghost = bus.makeMonitorHandle(name: "networkmanager#0")
        bus.release(ghost)
        let heir = bus.makeMonitorHandle(name: "networkmanager#1")
        heir.publish(Observation(role: .link, state: .offline, interface: ""))
        ghost.publish(Observation(role: .link, state: .online, interface: "wlan0"))
        ghost.publish(Observation(role: .reachability, state: .online, interface: "wlan0"))
        #expect(bus.current.state == .offline)
        bus.release(ghost)  // a second release of the ghost leaves the heir alone
        heir.publish(Observation(role: .link, state: .online, interface: "eth0"))
        #expect(bus.path.interface == "eth0")
    }

    @Test func aNewSinkStartsFromTheCurrentState() async {
        let bus = Bus(clock: TestClock())
        let first = await bus.attachSink(policy: .latest).next()
        #expect(first?.event.state == .unknown)
        #expect(first?.event.sequence == 0)
        #expect(first?.isTransition == false)
        bus.makeMonitorHandle(name: "m").publish(observation(.online))
        let later = await bus.attachSink(policy: .latest).next()
        #expect(later?.event.state == .online)
        #expect(later?.isTransition == false)
    }

    @Test func outagesAreTrackedFromDegradationToOnline() async throws {
        let clock = TestClock()
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .zero, up: .zero))
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let sink = InMemorySink()
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        defer { task.cancel() }
        let m = bus.makeMonitorHandle(name: "test")
        for s in [ConnectivityState.online, .offline, .portal, .online, .limited] {
            m.publish(observation(s))
        }
        #expect(await eventually { sink.transitions.count == 5 })
        let outages = sink.updates.filter(\.isTransition).map(\.outage)
        #expect(outages[0] == nil)
        #expect(outages[1]?.id == 1 && outages[1]?.isOver == false && outages[1]?.worst == .offline)
        #expect(outages[2]?.id == 1 && outages[2]?.worst == .offline)  // offline → portal: same outage
        #expect(outages[3]?.id == 1 && outages[3]?.isOver == true)     // back online ends it
        #expect(outages[4]?.id == 2 && outages[4]?.isOver == false)    // a new one
    }

    @Test func attributeOnlyChangesUpdateSinksWithoutATransition() async throws {
        let bus = Bus(clock: TestClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let sink = InMemorySink()
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        defer { task.cancel() }
        let m = bus.makeMonitorHandle(name: "probe")
        m.publish(Observation(role: .reachability, state: .online, interface: "eth0", rttMs: 20))
        m.publish(Observation(role: .reachability, state: .online, interface: "eth0", rttMs: 7))
        #expect(await eventually { sink.updates.last?.event.rttMs == 7 })
        #expect(sink.transitions.count == 1)
        #expect(bus.current.sequence == 1)
        #expect(bus.current.rttMs == 7)
    }

    @Test func aSinkThatHangsForeverDelaysNoOther() async throws {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let stuck = bus.attachSink(policy: .latest)  // never read: hung like a dead notification server
        let hanging = InMemorySink(config: .init(hang: true))
        let hangTask = Task { try await hanging.run(updates: SinkUpdates(stuck)) }
        defer { hanging.blocker.release() }
        #expect(await eventually { hanging.blocker.isBlocking })

        struct Arrival: Sendable { var sequence: UInt64 }
        final class Arrivals: Sendable {
            let value = Mutex<[[Arrival]]>(Array(repeating: [], count: 3))
            func withLock<R>(_ body: (inout [[Arrival]]) -> R) -> R { value.withLock { body(&$0) } }
        }
        let arrivals = Arrivals()
        var tasks: [Task<Void, Never>] = []
        for i in 0..<3 {
            let mailbox = bus.attachSink(policy: .latest)
            tasks.append(Task {
                for await u in SinkUpdates(mailbox) where u.isTransition {
                    arrivals.withLock { $0[i].append(Arrival(sequence: u.event.sequence)) }
                }
            })
        }
        defer { tasks.forEach { $0.cancel() } }

        let m = bus.makeMonitorHandle(name: "m")
        for n in 0..<20 {
            m.publish(observation(n % 2 == 0 ? .offline : .online))
            // Let each transition be taken before the next, so none coalesce away.
            let seq = UInt64(n + 1)
            #expect(await eventually { arrivals.withLock { $0.allSatisfy { $0.last?.sequence == seq } } })
        }
        let all = arrivals.withLock { $0 }
        for sink in all {
            #expect(sink.map(\.sequence) == Array(1...20))
        }
        // Still blocked, holding its thread: the others got everything meanwhile,
        // not stalled behind it (how fast is the benchmark's business: bench/core.sh).
        #expect(hanging.blocker.isBlocking)
        #expect(hanging.updates.count == 1)
        hanging.blocker.release()
        _ = try? await hangTask.value
    }

    @Test func checkPublishesTheFreshResultWithoutWaitingForDebounce() async throws {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .seconds(60), up: .seconds(60)))
        let m = bus.makeMonitorHandle(name: "probe")
        m.publish(observation(.online))
        #expect(bus.current.state == .online)
        // A probe that answers every check request with "limited".
        let requests = m.checkRequests()
        let prober = Task {
            for await _ in requests { m.publish(observation(.limited)) }
        }
        defer { prober.cancel() }
        let after = await bus.check(timeout: .seconds(5))
        #expect(after.state == .limited)
        #expect(bus.current.state == .limited)
    }

    @Test func checkWithoutAProbeReturnsTheCurrentState() async {
        let bus = Bus(clock: ContinuousClock())
        let m = bus.makeMonitorHandle(name: "link")
        m.publish(Observation(role: .link, state: .online, interface: "eth0"))
        let clock = ContinuousClock()
        let start = clock.now
        // At once, not at the timeout: the margin is the timeout's, not the machine's speed.
        #expect(await bus.check(timeout: .seconds(60)).state == .online)
        #expect(start.duration(to: clock.now) < .seconds(30))
    }

    @Test func releasingAMonitorForgetsWhatItSaid() async {
        let bus = Bus(clock: TestClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let link = bus.makeMonitorHandle(name: "link")
        let probe = bus.makeMonitorHandle(name: "probe")
        link.publish(Observation(role: .link, state: .online, interface: "eth0"))
        probe.publish(observation(.portal))
        #expect(bus.current.state == .portal)
        bus.release(probe)
        #expect(bus.current.state == .online)
    }

    @Test func muteReachesSinks() async {
        let bus = Bus(clock: TestClock())
        let mailbox = bus.attachSink(policy: .latest)
        bus.mute(for: .seconds(3600))
        var last: Update?
        while mailbox.backlog > 0 { last = await mailbox.next() }
        #expect(last?.isMuted(at: WallClock.micros()) == true)
        #expect(last?.isMuted(at: WallClock.micros() + 3_601_000_000) == false)
    }
}

/// A reachability verdict never outlives the path it was measured on.
@Suite struct PathTruthTests {
    let link = { (state: ConnectivityState, iface: String) in
        Observation(role: .link, state: state, interface: state == .offline ? "" : iface,
                    reason: state == .offline ? "default route removed" : "default route via \(iface)")
    }

    func probeSays(_ state: ConnectivityState, _ reason: String) -> Observation {
        Observation(role: .reachability, state: state, interface: "eth0", reason: reason)
    }

    /// Link and probe handles on one bus, and every transition a sink saw.
    func setUp(_ clock: TestClock<Duration>) -> (Bus, MonitorHandle, MonitorHandle, InMemorySink, Task<Void, any Error>) {
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let sink = InMemorySink()
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        return (bus, bus.makeMonitorHandle(name: "netlink"),
                bus.makeMonitorHandle(name: "probe", remeasuresReachability: true), sink, task)
    }

    @Test func aRouteThatComesBackIsNotOnlineUntilAFreshProbeSaysSo() async {
        let clock = TestClock()
        let (bus, netlink, probe, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(link(.online, "eth0"))
        probe.publish(probeSays(.online, "probe answered in 20 ms"), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })

        netlink.publish(link(.offline, ""))
        await clock.advance(by: .seconds(3))
        #expect(await eventually { sink.states == [.online, .offline] })

        // The access point is back, its uplink is dead: nothing is known yet.
        netlink.publish(link(.online, "eth0"))
        await clock.advance(by: .seconds(10))
        #expect(bus.current.state == .offline)
        // The fresh probe on the new path says limited: that is what comes next.
        probe.publish(probeSays(.limited, "probe to x timed out after 5s"), measuredOn: probe.path)
        await clock.advance(by: .seconds(3))
        #expect(await eventually { sink.states == [.online, .offline, .limited] })
        #expect(sink.transitions.last?.reason == "probe to x timed out after 5s")
    }

    @Test func aVerdictMeasuredBeforeTheRouteChangedIsDropped() async {
        let clock = TestClock()
        let (bus, netlink, probe, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(link(.online, "eth0"))
        let before = probe.path
        netlink.publish(link(.online, "wlan0"))
        // A probe that left by eth0 answers after the route moved to wlan0.
        probe.publish(probeSays(.online, "probe answered in 3 ms"), measuredOn: before)
        await clock.advance(by: .seconds(5))
        #expect(bus.current.state == .unknown)
        #expect(sink.states.isEmpty)
        probe.publish(Observation(role: .reachability, state: .portal, interface: "wlan0", reason: "redirected"),
                      measuredOn: probe.path)
        await clock.advance(by: .seconds(3))
        #expect(await eventually { sink.states == [.portal] })
        #expect(bus.current.interface == "wlan0")
    }

    @Test func startUpWaitsForTheProbeInsteadOfCallingARouteOnline() async {
        let clock = TestClock()
        let (bus, netlink, probe, sink, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(link(.online, "eth0"))
        await clock.advance(by: .seconds(5))
        #expect(bus.current.state == .unknown)
        probe.publish(probeSays(.online, "probe answered in 9 ms"), measuredOn: probe.path)
        #expect(await eventually { sink.states == [.online] })
        #expect(sink.transitions.first?.reason == "probe answered in 9 ms")
    }

    @Test func anUnconfirmedFailureDecidesNothing() async {
        let clock = TestClock()
        let (bus, netlink, probe, _, task) = setUp(clock)
        defer { task.cancel() }
        netlink.publish(link(.online, "eth0"))
        probe.publish(probeSays(.unknown, "probe timed out once"), measuredOn: probe.path)
        await clock.advance(by: .seconds(5))
        #expect(bus.current.state == .unknown)
    }

    @Test func checkWhileOfflineAnswersAtOnce() async {
        // A real clock: a check that waited for a probe would take the full timeout.
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let netlink = bus.makeMonitorHandle(name: "netlink")
        let probe = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        let requests = probe.checkRequests()  // a probe is listening, but with no route it cannot run
        netlink.publish(link(.online, "eth0"))
        probe.publish(probeSays(.online, "probe answered in 20 ms"), measuredOn: probe.path)
        netlink.publish(link(.offline, ""))
        let clock = ContinuousClock()
        let start = clock.now
        let answer = await bus.check(timeout: .seconds(60))
        #expect(start.duration(to: clock.now) < .seconds(30), "waited for the timeout")
        // An explicit check publishes without waiting out the debounce window.
        #expect(answer.state == .offline)
        #expect(answer.reason == "default route removed")
        _ = requests
    }

    @Test func pathChangesReachTheProbe() async {
        let bus = Bus(clock: TestClock())
        let netlink = bus.makeMonitorHandle(name: "netlink")
        let probe = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        var paths = probe.pathChanges().makeAsyncIterator()
        #expect(await paths.next() == LinkPath())
        netlink.publish(link(.online, "eth0"))
        let first = await paths.next()
        #expect(first?.interface == "eth0" && first?.known == true)
        netlink.publish(Observation(role: .link, state: .online, interface: "eth0", kind: .ethernet, reason: "kind known"))
        netlink.publish(link(.offline, ""))
        let second = await paths.next()
        #expect(second?.isOffline == true)
        #expect(second!.generation > first!.generation)
    }
}
