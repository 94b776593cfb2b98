import Foundation
import LifelineTestKit
import Testing

/// A NetworkManager monitor replaced by a reload while it waits on a `GetAll`
/// that NetworkManager answers late: the real daemon against python-dbusmock's
/// NetworkManager on a private stand-in for the system bus. The old monitor
/// cannot be cancelled inside its D-Bus call, so 5 s after the reload its slot
/// is released while it still runs. When the answer comes it goes on with what
/// NetworkManager said meanwhile ("disconnected") and then ends; those last
/// words must not outlive it, or the daemon stays offline once NetworkManager
/// is connected again.
@Suite(.serialized) struct NetworkManagerGhostTests {
    static let manager = "GetAll /org/freedesktop/NetworkManager org.freedesktop.NetworkManager"
    static let cafeDevice = "GetAll /org/freedesktop/NetworkManager/Devices/wlan1 org.freedesktop.NetworkManager.Device"
    static let dropped = "dropped an observation from a released monitor"

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

    func last(_ fixture: DaemonFixture, _ key: String) -> String? {
        fixture.loggedEvents().last?[key] as? String
    }

    @Test(.requires(NetworkManagerMock.requirement)) func aMonitorReleasedInsideALateGetAllIsNotHeardWhenItAnswers() async throws {
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        try fixture.writeConfig(config(retry: "60s"))
        try fixture.start()
        let pid = try #require(fixture.process?.pid)
        await Harness.waitUntil("online via Home Wi-Fi") {
            last(fixture, "state") == "online" && last(fixture, "connection") == "Home Wi-Fi"
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

        // NetworkManager loses the network: the new monitor says so (the old one
        // hears it too, and keeps it for after its GetAll).
        try nm.set("state", "20")
        await Harness.waitUntil("offline") { last(fixture, "state") == "offline" }

        // 5 s after the reload the old monitor, still in its GetAll, loses its slot.
        await Harness.waitUntil(timeout: .seconds(10), "the old monitor given up on") {
            fixture.daemonLog.contains("did not stop within 5s")
        }
        #expect(fixture.process?.isRunning == true)

        // NetworkManager answers the old GetAll, about 6 s after it was asked (the
        // monitor waits up to 10 s): the old monitor reads the device, publishes
        // Cafe, then "disconnected" (what it heard meanwhile), and ends.
        let deviceReads = nm.calls.components(separatedBy: Self.cafeDevice).count
        try nm.set("answer", "wlan1")
        await Harness.waitUntil("the old monitor reading on") {
            nm.calls.components(separatedBy: Self.cafeDevice).count > deviceReads
        }
        // Not asserted here: a daemon that lets the old monitor speak logs nothing.
        _ = await eventually(timeout: .seconds(3), every: .milliseconds(10)) {
            fixture.daemonLog.contains("\(Self.dropped): NetworkManager is disconnected")
        }

        // NetworkManager is connected again: what a user sees follows it.
        try nm.set("state", "70")
        await Harness.waitUntil(timeout: .seconds(5), "online via Cafe (log: \(fixture.loggedStates()))") {
            last(fixture, "state") == "online" && last(fixture, "connection") == "Cafe"
        }
        let status = try fixture.statusJSON()
        #expect(status["state"] as? String == "online", "\(status)")
        let plain = try fixture.cli(["status"])
        #expect(plain.stdout.hasPrefix("online via Cafe (wifi) for "), "\(plain.stdout)")
        // The log names the monitor that would not stop, and what it said after was not heard.
        let gaveUp = fixture.daemonLog.split(separator: "\n").filter { $0.contains("did not stop within 5s") }
        #expect(gaveUp.count == 1 && gaveUp[0].contains("networkmanager"), "\(gaveUp)")
        #expect(fixture.daemonLog.contains("\(Self.dropped): NetworkManager is disconnected"))
        #expect(await fixture.stop() == 0)
    }
}
