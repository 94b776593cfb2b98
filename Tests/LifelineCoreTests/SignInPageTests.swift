import Clocks
import LifelineCore
import Testing

/// "Open sign-in page" on the bus: the page is the one a monitor announced,
/// and checks follow while the portal stands (after 2 s, then twice as long
/// each time), so signing in is seen within seconds; they stop once it is gone.
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

    /// A portal published by a probe that announced its sign-in page, and
    /// "Open sign-in page" clicked; the probe's check requests counted.
    func signInOpened(_ clock: TestClock<Duration>) async -> (Bus, MonitorHandle, CheckCount) {
        let bus = Bus(clock: clock, debounce: DebounceSettings(down: .zero, up: .zero), opener: "/nonexistent/xdg-open")
        let handle = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        handle.announceSignInPage("http://check.example/x")
        let count = CheckCount(handle)
        handle.publish(Observation(role: .reachability, state: .portal, interface: "eth0", reason: "redirected"))
        await settle()
        #expect(bus.current.state == .portal)
        // An opener that cannot start is logged; the checks still come.
        bus.openSignInPage()
        await settle()
        return (bus, handle, count)
    }

    @Test func checksFollowWhileThePortalStandsAndStopAfter() async {
        let clock = TestClock()
        let (_, handle, count) = await signInOpened(clock)
        defer { count.stop() }
        #expect(count.count == 1, "one check at once")
        // Then after 2 s, 4 s more, 8 s more: three checks in 14 s, not seven.
        for _ in 0..<7 {
            await clock.advance(by: .seconds(2))
            await settle()
        }
        #expect(count.count == 4, "checks at 2, 6 and 14 s while the portal stands")

        handle.publish(Observation(role: .reachability, state: .online, interface: "eth0", reason: "answered"))
        await settle()
        await clock.advance(by: .seconds(180))
        await settle()
        #expect(count.count == 4, "none once online")
    }

    /// Three minutes behind a portal after "Open sign-in page": a handful of
    /// checks, not one every 2 s (90), which a metered link pays for.
    @Test func theSignInChecksBackOffAndEndAfterThreeMinutes() async {
        let clock = TestClock()
        let (bus, _, count) = await signInOpened(clock)
        defer { count.stop() }
        for _ in 0..<200 {
            await clock.advance(by: .seconds(1))
            await settle()
        }
        // At once, then at 2, 6, 14, 30, 62 and 126 s.
        #expect(count.count == 7)
        withExtendedLifetime(bus) {}  // the checks stop with the bus
    }
}
