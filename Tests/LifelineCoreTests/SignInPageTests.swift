import Clocks
import LifelineCore
import Synchronization
import Testing

/// "Open sign-in page" on the bus: the page is the one a monitor announced,
/// and checks follow every 2 s while the portal stands, so signing in is seen
/// within seconds; they stop once it is gone.
@Suite struct SignInPageBusTests {
    func settle() async {
        for _ in 0..<20 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test func thePageIsWhatTheProbeAnnouncedAndGoesWithIt() {
        let bus = Bus(clock: TestClock())
        #expect(bus.signInPage == nil)
        let handle = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        handle.announceSignInPage("http://check.example/x")
        #expect(bus.signInPage == "http://check.example/x")
        bus.release(handle)
        #expect(bus.signInPage == nil)
    }

    @Test func checksFollowWhileThePortalStandsAndStopAfter() async {
        let clock = TestClock()
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .zero, up: .zero), opener: "/nonexistent/xdg-open")
        let handle = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        handle.announceSignInPage("http://check.example/x")
        let requests = handle.checkRequests()
        let count = Atomic<Int>(0)
        let counter = Task { for await _ in requests { count.add(1, ordering: .relaxed) } }
        handle.publish(Observation(role: .reachability, state: .portal, interface: "eth0", reason: "redirected"))
        await settle()
        #expect(bus.current.state == .portal)

        // An opener that cannot start is logged; the checks still come.
        bus.openSignInPage()
        await settle()
        #expect(count.load(ordering: .relaxed) == 1, "one check at once")
        for _ in 0..<3 {
            await clock.advance(by: .seconds(2))
            await settle()
        }
        #expect(count.load(ordering: .relaxed) == 4, "one every 2 s while the portal stands")

        handle.publish(Observation(role: .reachability, state: .online, interface: "eth0", reason: "answered"))
        await settle()
        for _ in 0..<3 {
            await clock.advance(by: .seconds(2))
            await settle()
        }
        #expect(count.load(ordering: .relaxed) == 4, "none once online")
        counter.cancel()
    }
}
