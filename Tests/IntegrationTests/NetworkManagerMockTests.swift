import Foundation
import LifelineTestKit
import Testing

/// The real daemon with the `networkmanager` monitor against python-dbusmock's
/// NetworkManager on a private stand-in for the system bus: what a user sees
/// (the event log, `lifeline status`) as NetworkManager changes.
@Suite(.serialized) struct NetworkManagerMockTests {
    func config(down: String = "300ms", up: String = "300ms") -> String {
        """
        [debounce]
        down = "\(down)"
        up = "\(up)"

        [[monitor]]
        kind = "networkmanager"

        [[sink]]
        kind = "log"
        """
    }

    func lastEvent(_ fixture: DaemonFixture) -> [String: Any]? { fixture.loggedEvents().last }

    func waitForState(_ fixture: DaemonFixture, _ state: String, timeout: Duration = .seconds(10),
                      sourceLocation: SourceLocation = #_sourceLocation) async {
        await Harness.waitUntil(timeout: timeout, "state \(state)", sourceLocation: sourceLocation) {
            lastEvent(fixture)?["state"] as? String == state
        }
    }

    @Test(.requires(NetworkManagerMock.requirement)) func followsNetworkManagerThroughPortalLimitedOfflineAndARestart() async throws {
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "1")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        try fixture.writeConfig(config())
        try fixture.start()

        await waitForState(fixture, "online")
        let online = try #require(lastEvent(fixture))
        #expect(online["kind"] as? String == "wifi")
        #expect(online["connection"] as? String == "Home Wi-Fi")
        #expect(online["interface"] as? String == "wlan0")
        #expect(online["metered"] as? Bool == true)
        let status = try fixture.cli(["status"])
        #expect(status.stdout.hasPrefix("online via Home Wi-Fi (wifi, metered) for "), "\(status.stdout)")

        try nm.set("connectivity", "2")
        await waitForState(fixture, "portal")
        #expect((lastEvent(fixture)?["reason"] as? String)?.contains("captive portal") == true)
        try nm.set("connectivity", "3")
        await waitForState(fixture, "limited")
        try nm.set("connectivity", "4")
        await waitForState(fixture, "online")
        try nm.set("state", "20")
        await waitForState(fixture, "offline")
        #expect(lastEvent(fixture)?["reason"] as? String == "NetworkManager is disconnected")

        // NetworkManager leaves and comes back (connected, full connectivity): the state follows.
        await nm.stop()
        #expect(fixture.process?.isRunning == true)
        try await nm.start()
        try nm.set("primary", "Office", "802-3-ethernet", "eth0", "2")
        await Harness.waitUntil("online via Office") {
            lastEvent(fixture)?["state"] as? String == "online" && lastEvent(fixture)?["connection"] as? String == "Office"
        }
        #expect(lastEvent(fixture)?["kind"] as? String == "ethernet")
        #expect(fixture.process?.isRunning == true)
        #expect(await fixture.stop() == 0)
        let complaints = fixture.daemonLog.split(separator: "\n").filter {
            $0.contains("networkmanager") && ($0.contains("error") || $0.contains("warning"))
        }
        #expect(complaints.isEmpty, "\(complaints)")
    }

    @Test(.requires(NetworkManagerMock.requirement)) func twentyConnectivityFlapsInFiveSecondsAreAtMostOneOutage() async throws {
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        try fixture.writeConfig(config(down: "2s", up: "1s"))
        try fixture.start()
        await waitForState(fixture, "online")

        try nm.set("flap", "20", "5")
        // The last flap is FULL: online holds `up` after it.
        await waitForState(fixture, "online", timeout: .seconds(10))
        try await Task.sleep(for: .seconds(2))  // a window in which a late outage would show
        let outages = fixture.loggedEvents().filter { ($0["previous"] as? String) == "online" }
        #expect(outages.count <= 1, "\(fixture.loggedStates())")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(NetworkManagerMock.requirement)) func noSystemBusIsOneQuietLineAndTheBusIsPickedUpWhenItAppears() async throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-sysbus-\(UUID().uuidString.prefix(8))").path
        let fixture = try DaemonFixture(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)"])
        try fixture.writeConfig(config())
        try fixture.start()
        await Harness.waitUntil("the monitor to say there is no system bus") { fixture.daemonLog.contains("no system bus") }
        // 8 s: the retries back off to 8 s by then; none of them may speak again.
        try await Task.sleep(for: .seconds(8))
        let lines = fixture.daemonLog.split(separator: "\n").filter { $0.contains("no system bus") }
        #expect(lines.count == 1, "\(fixture.daemonLog)")
        #expect(fixture.process?.isRunning == true)

        // The bus appears (with NetworkManager on it): followed within a few seconds, not after the back-off.
        let nm = try await NetworkManagerMock(socket: socket)
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        await Harness.waitUntil(timeout: .seconds(4), "online via Home Wi-Fi") {
            lastEvent(fixture)?["state"] as? String == "online" && lastEvent(fixture)?["connection"] as? String == "Home Wi-Fi"
        }
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(NetworkManagerMock.requirement)) func checkNowAlsoAsksNetworkManagerWhenItsOwnCheckingIsOn() async throws {
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")  // checking on
        let session = try PrivateBus()
        let fixture = try DaemonFixture(extraEnvironment: nm.environment.merging(session.environment) { $1 })
        try fixture.writeConfig(config() + """

            [[sink]]
            kind = "dbus"
            check_timeout = "1s"
            """)
        try fixture.start()
        await waitForState(fixture, "online")
        #expect(!nm.calls.contains("CheckConnectivity"))

        let first = try fixture.cli(["check"])
        #expect(first.status == 0, "\(first.stderr)")
        await Harness.waitUntil("NetworkManager asked to check") { nm.calls.contains("CheckConnectivity") }
        let asked = nm.calls.components(separatedBy: "CheckConnectivity").count

        // Its checking turned off (seen once the connectivity change after it is): not asked again.
        try nm.set("checking", "off")
        try nm.set("connectivity", "3")
        await waitForState(fixture, "limited")
        let second = try fixture.cli(["check"])
        #expect(second.stdout.contains("limited"), "\(second.stdout)")
        #expect(nm.calls.components(separatedBy: "CheckConnectivity").count == asked)
        #expect(await fixture.stop() == 0)
    }
}
