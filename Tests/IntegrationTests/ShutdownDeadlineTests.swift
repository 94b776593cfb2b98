import Foundation
import LifelineTestKit
import Testing

/// A stop has one deadline: every plugin is asked at once and waited for
/// together, so plugins that hang cost the 5 s once, not 5 s each.
@Suite struct ShutdownDeadlineTests {
    /// Three NetworkManager monitors, each inside a D-Bus call that
    /// NetworkManager never answers (libdbus gives up on it after 10 s, and
    /// the call cannot be cancelled before): SIGTERM ends the daemon within the
    /// one 5 s deadline, and the log names each monitor that did not stop.
    @Test(.requires(NetworkManagerMock.requirement)) func threeHungMonitorsCostOneDeadline() async throws {
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        let monitors = (1...3).map { "[[monitor]]\nkind = \"networkmanager\"\nretry = \"\($0 * 10)s\"" }
        try fixture.writeConfig(monitors.joined(separator: "\n\n") + "\n\n[[sink]]\nkind = \"log\"\n")
        try fixture.start()
        await Harness.waitUntil("online via Home Wi-Fi") {
            fixture.loggedEvents().last?["connection"] as? String == "Home Wi-Fi"
        }
        // NetworkManager moves to Cafe and never describes it: each monitor waits in its GetAll.
        try nm.set("stalled-primary", "Cafe", "802-11-wireless", "wlan1", "2")
        await Harness.waitUntil("all three monitors in a stalled GetAll") {
            nm.calls.components(separatedBy: "(stalled)").count - 1 == 3
        }
        let clock = ContinuousClock()
        let started = clock.now
        let status = await fixture.stop(timeout: .seconds(20))
        let took = clock.now - started
        #expect(status == 0, "\(fixture.daemonLog)")
        // 5 s for all three; one at a time it takes twice that or more.
        #expect(took < .seconds(7), "the stop took \(took)")
        let gaveUp = fixture.daemonLog.split(separator: "\n").filter { $0.contains("did not stop within 5s") }
        for n in 1...3 {
            #expect(gaveUp.contains { $0.contains("monitor #\(n) (networkmanager)") }, "monitor #\(n) not named: \(gaveUp)")
        }
    }
}
