import Foundation
import LifelineTestKit
import Testing

/// A NetworkManager monitor replaced by a reload while it waits on a `GetAll`
/// that NetworkManager answers late: the real daemon against python-dbusmock's
/// NetworkManager on a private stand-in for the system bus. The old monitor
/// cannot be cancelled inside its D-Bus call, so after 5 s its slot is released
/// while it still runs; when the answer comes it publishes what it knew
/// ("connected via Cafe"). By then NetworkManager says disconnected, and the
/// user must go on seeing offline.
@Suite(.serialized) struct NetworkManagerGhostTests {
    static let manager = "GetAll /org/freedesktop/NetworkManager org.freedesktop.NetworkManager"
    static let cafeDevice = "GetAll /org/freedesktop/NetworkManager/Devices/wlan1 org.freedesktop.NetworkManager.Device"

    func config(retry: String) -> String {
        """
        [debounce]
        down = "300ms"
        up = "300ms"

        [[monitor]]
        kind = "networkmanager"
        retry = "\(retry)"

        [[sink]]
        kind = "log"
        """
    }

    @Test func aMonitorReleasedInsideALateGetAllIsNotHeardWhenItAnswers() async throws {
        guard NetworkManagerMock.available else { return }
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        try fixture.writeConfig(config(retry: "60s"))
        try fixture.start()
        let pid = try #require(fixture.process?.pid)
        await Harness.waitUntil("online via Home Wi-Fi") {
            fixture.loggedEvents().last?["state"] as? String == "online"
                && fixture.loggedEvents().last?["connection"] as? String == "Home Wi-Fi"
        }

        // NetworkManager moves to Cafe and is slow to describe it: the monitor
        // waits in its GetAll, which NetworkManager holds until told to answer.
        try nm.set("held-primary", "Cafe", "802-11-wireless", "wlan1", "2")
        await Harness.waitUntil("the monitor waiting on the held GetAll") { nm.calls.contains("(held)") }

        // A changed section replaces the monitor; the new one reads NetworkManager at once.
        let managerReads = nm.calls.components(separatedBy: Self.manager).count
        try fixture.writeConfig(config(retry: "30s"))
        kill(pid, SIGHUP)
        await Harness.waitUntil("reloaded") { fixture.daemonLog.contains("SIGHUP: reloaded") }
        await Harness.waitUntil("the new monitor reading NetworkManager") {
            nm.calls.components(separatedBy: Self.manager).count > managerReads
        }

        // NetworkManager loses the network: the new monitor says so.
        try nm.set("state", "20")
        await Harness.waitUntil("offline") { fixture.loggedEvents().last?["state"] as? String == "offline" }
        #expect(fixture.loggedEvents().last?["reason"] as? String == "NetworkManager is disconnected")

        // 5 s after the reload the old monitor, still in its GetAll, loses its slot.
        await Harness.waitUntil(timeout: .seconds(10), "the old monitor given up on") {
            fixture.daemonLog.contains("did not stop within 5s")
        }
        #expect(fixture.process?.isRunning == true)

        // Now NetworkManager answers the old GetAll: the old monitor goes on to
        // read the device, then publishes Cafe as it knew it (connected).
        let deviceReads = nm.calls.components(separatedBy: Self.cafeDevice).count
        try nm.set("answer", "wlan1")
        await Harness.waitUntil("the old monitor reading on") {
            nm.calls.components(separatedBy: Self.cafeDevice).count > deviceReads
        }
        await Harness.waitUntil("the old monitor's words dropped") {
            fixture.daemonLog.contains("dropped an observation from a released monitor")
        }
        try await Task.sleep(for: .seconds(2))  // a window in which a ghost's online would be published

        // What a user sees: still offline, and nothing logged after it.
        let events = fixture.loggedEvents()
        #expect(events.last?["state"] as? String == "offline", "\(fixture.loggedStates())")
        #expect(events.last?["reason"] as? String == "NetworkManager is disconnected")
        let status = try fixture.statusJSON()
        #expect(status["state"] as? String == "offline", "\(status)")
        let plain = try fixture.cli(["status"])
        #expect(plain.stdout.hasPrefix("offline"), "\(plain.stdout)")
        #expect(await fixture.stop() == 0)
    }
}
