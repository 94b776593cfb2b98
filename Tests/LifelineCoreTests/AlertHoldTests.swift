import Clocks
import LifelineCore
import LifelineTestKit
import Testing

/// Alerts wait while the machine sleeps, during the resume grace and while the
/// session is inactive; the state goes on being published all along.
@Suite struct AlertHoldTests {
    func observation(_ state: ConnectivityState) -> Observation {
        Observation(role: .reachability, state: state, interface: state == .offline ? "" : "wlan0", reason: "test \(state)")
    }

    /// A bus with 2 s / 1 s debounce, one monitor for the network, one for logind, and a sink.
    func setUp(_ clock: TestClock<Duration>) -> (Bus, network: MonitorHandle, logind: MonitorHandle, InMemorySink, Task<Void, any Error>) {
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .seconds(2), up: .seconds(1)))
        let sink = InMemorySink()
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 100))
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        return (bus, bus.makeMonitorHandle(name: "probe"), bus.makeMonitorHandle(name: "logind"), sink, task)
    }

    @Test func anOutageStillThereWhenTheGraceEndsIsReleasedToSinks() async {
        let clock = TestClock()
        let (_, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.online))
        #expect(await eventually { sink.states == [.online] })
        #expect(sink.updates.last?.alertsHeld == false)

        logind.holdAlertsForSleep()
        #expect(await eventually { sink.updates.last?.alertsHeld == true })
        network.publish(observation(.offline))
        await clock.advance(by: .seconds(2))
        // Published as always (log, D-Bus and tmux see it), but held for alerts.
        #expect(await eventually { sink.states == [.online, .offline] })
        #expect(sink.updates.last?.isTransition == true && sink.updates.last?.alertsHeld == true)

        logind.resumed(grace: .seconds(10))
        await clock.advance(by: .milliseconds(9999))
        #expect(sink.updates.last?.alertsHeld == true)
        let before = sink.updates.count
        await clock.advance(by: .milliseconds(1))
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
        let released = sink.updates[before...]
        #expect(released.count == 1)
        #expect(released.first?.isTransition == false)
        #expect(released.first?.event.state == .offline)
        #expect(released.first?.outage?.isOver == false)
        #expect(sink.states == [.online, .offline])
    }

    @Test func aHoldLiftedAfterTheNetworkCameBackReleasesARecoveredState() async {
        let clock = TestClock()
        let (_, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.online))
        logind.holdAlertsForSleep()
        network.publish(observation(.offline))
        await clock.advance(by: .seconds(3))
        logind.resumed(grace: .seconds(10))
        await clock.advance(by: .seconds(5))
        network.publish(observation(.online))
        await clock.advance(by: .seconds(1))
        #expect(await eventually { sink.states == [.online, .offline, .online] })
        #expect(sink.updates.last?.alertsHeld == true)

        await clock.advance(by: .seconds(4))
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
        let last = sink.updates.last
        #expect(last?.isTransition == false)
        #expect(last?.event.state == .online)
        #expect(last?.outage?.isOver == true)
    }

    @Test func aTransitionDuringTheGraceIsPublishedAtOnceAndStaysHeld() async {
        let clock = TestClock()
        let (bus, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.online))
        logind.holdAlertsForSleep()
        logind.resumed(grace: .seconds(10))
        network.publish(observation(.limited))
        await clock.advance(by: .seconds(2))
        #expect(await eventually { sink.states == [.online, .limited] })
        #expect(bus.current.state == .limited)
        #expect(sink.updates.last?.alertsHeld == true)
        await clock.advance(by: .seconds(8))
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
        #expect(sink.updates.last?.event.state == .limited)
    }

    @Test func anInactiveSessionHoldsUntilItIsActiveAgain() async {
        let clock = TestClock()
        let (_, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.online))
        logind.sessionIsActive(false)
        network.publish(observation(.offline))
        // No grace: an inactive session holds for as long as it lasts.
        await clock.advance(by: .seconds(3600))
        #expect(await eventually { sink.states == [.online, .offline] })
        #expect(sink.updates.last?.alertsHeld == true)
        logind.sessionIsActive(true)
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
        #expect(sink.updates.last?.event.state == .offline)
    }

    @Test func sleepingWhileTheSessionIsInactiveHoldsUntilBothAreOver() async {
        let clock = TestClock()
        let (_, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.offline))
        logind.sessionIsActive(false)
        logind.holdAlertsForSleep()
        logind.resumed(grace: .seconds(10))
        await clock.advance(by: .seconds(20))
        #expect(sink.updates.last?.alertsHeld == true)
        logind.sessionIsActive(true)
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
    }

    @Test func aMonitorThatStopsTakesItsHoldWithIt() async {
        let clock = TestClock()
        let (bus, network, logind, sink, task) = setUp(clock)
        defer { task.cancel() }
        network.publish(observation(.offline))
        logind.holdAlertsForSleep()
        #expect(await eventually { sink.updates.last?.alertsHeld == true })
        bus.release(logind)
        #expect(await eventually { sink.updates.last?.alertsHeld == false })
    }

    @Test func aNewSinkStartsKnowingTheHold() async {
        let bus = Bus(clock: TestClock())
        bus.makeMonitorHandle(name: "logind").sessionIsActive(false)
        let first = await bus.attachSink(policy: .latest).next()
        #expect(first?.alertsHeld == true)
    }
}
