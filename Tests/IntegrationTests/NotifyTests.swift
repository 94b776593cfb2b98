import Foundation
import Testing

/// The toast against a real notification server: dunst under Xvfb on a private bus.
@Suite(.serialized) struct NotifyTests {
    struct Lab {
        let desktop: Desktop
        let fixture: DaemonFixture
        let net: ScriptedNetwork
        let monitor: BackgroundProcess

        var calls: NotificationCalls { NotificationCalls(monitor.output) }
        var outageToasts: [NotificationCalls.Notify] { calls.notifies.filter { $0.summary != "Back online" } }
    }

    /// Starts the desktop (dunst unless `server` is false), a Notify watcher and the daemon.
    func lab(server: Bool = true, checks: Bool = false, down: String = "300ms") async throws -> Lab? {
        guard Harness.available(.tools(Desktop.tools)) else { return nil }
        let desktop = try Desktop()
        if server { try await desktop.startNotificationServer() }
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment)
        let net: ScriptedNetwork
        if checks {
            // A monitor that answers "check" on stdin with `online` and leaves a mark.
            net = ScriptedNetwork(fixture: fixture)
            let mark = fixture.path("checked")
            let script = try fixture.writeScript("checker.sh", """
                #!/bin/sh
                tail -n +1 -F "\(net.feed)" &
                while read -r line; do
                  [ "$line" = check ] && touch "\(mark)" && echo '{"state":"online","interface":"eth0","reason":"checked"}'
                done
                """)
            try fixture.writeConfig("""
                [debounce]
                down = "\(down)"
                up = "200ms"
                [[monitor]]
                kind = "exec"
                command = ["\(script)"]
                checks = true
                [[sink]]
                kind = "libnotify"
                [[sink]]
                kind = "log"
                """)
        } else {
            net = ScriptedNetwork(fixture: fixture)
            try fixture.writeConfig("""
                [debounce]
                down = "\(down)"
                up = "200ms"
                \(net.monitorTOML)
                [[sink]]
                kind = "libnotify"
                [[sink]]
                kind = "log"
                """)
        }
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        try await Task.sleep(for: .milliseconds(200))  // dbus-monitor must be listening before the first call
        try fixture.start()
        return Lab(desktop: desktop, fixture: fixture, net: net, monitor: monitor)
    }

    @Test func oneToastPerOutageUpdatedInPlaceAndClosedOnRecovery() async throws {
        guard let lab = try await lab() else { return }
        defer { Task { await lab.fixture.stop() } }
        try lab.net.say("online", interface: "wlan0")
        await Harness.waitUntil("online") { lab.fixture.loggedStates() == ["online"] }
        #expect(lab.calls.notifies.isEmpty, "no toast because the daemon started")

        try lab.net.say("offline", reason: "default route via wlan0 removed")
        await Harness.waitUntil("offline toast") { lab.outageToasts.count == 1 && lab.desktop.displayedCount() == 1 }
        let first = try #require(lab.outageToasts.first)
        #expect(first.appName == "Lifeline")
        #expect(first.replacesID == 0)
        #expect(first.summary == "Offline")
        #expect(first.icon == "network-offline")
        #expect(first.body == "Default route via wlan0 removed.")

        let shot = try lab.desktop.screenshot(named: "notify-offline-toast.png")
        let colours = try Harness.run(["identify", "-format", "%k", shot.path]).stdout
        #expect((Int(colours) ?? 0) > 2, "the screenshot is blank (\(colours) colours)")

        try lab.net.say("portal", interface: "wlan0", reason: "redirected to http://login.hotel.test/")
        await Harness.waitUntil("updated in place") { lab.outageToasts.count == 2 }
        let update = try #require(lab.outageToasts.dropFirst().first)
        #expect(update.replacesID != 0, "the update must replace the first toast")
        #expect(update.summary == "Sign in to the network")
        #expect(update.body.contains("http://login.hotel.test/"))
        #expect(lab.desktop.displayedCount() == 1)

        try lab.net.say("online", interface: "wlan0")
        await Harness.waitUntil("closed on recovery") { lab.calls.closes.contains(update.replacesID) }
        await Harness.waitUntil("back online") { lab.calls.notifies.last?.summary == "Back online" }
        #expect(lab.calls.notifies.last?.body.hasPrefix("Back online via wlan0 — without internet for") == true
                || lab.calls.notifies.last?.body.hasPrefix("Back online via wlan0 — offline for") == true)
        #expect(lab.outageToasts.filter { $0.replacesID == 0 }.count == 1)
    }

    @Test func fiftyFlapsInTenSecondsMakeOneToast() async throws {
        guard let lab = try await lab() else { return }
        defer { Task { await lab.fixture.stop() } }
        try lab.net.say("online", interface: "eth0")
        await Harness.waitUntil("online") { lab.fixture.loggedStates() == ["online"] }
        // A loose cable: down 150 ms, up 50 ms, fifty times; recovery never holds 200 ms.
        for _ in 0..<50 {
            try lab.net.say("offline", reason: "carrier lost on eth0")
            try await Task.sleep(for: .milliseconds(150))
            try lab.net.say("online", interface: "eth0")
            try await Task.sleep(for: .milliseconds(50))
        }
        // The storm is one outage: published once, ended once.
        await Harness.waitUntil("recovered") { lab.fixture.loggedStates() == ["online", "offline", "online"] }
        await Harness.waitUntil("toast closed") { !lab.calls.closes.isEmpty }
        #expect(lab.outageToasts.count == 1, "one toast, never a stack: \(lab.outageToasts.map(\.summary))")
        #expect(lab.outageToasts.first?.replacesID == 0)
    }

    @Test func checkNowOnTheToastRunsACheck() async throws {
        guard let lab = try await lab(checks: true) else { return }
        defer { Task { await lab.fixture.stop() } }
        try lab.net.say("online", interface: "eth0")
        await Harness.waitUntil("online") { lab.fixture.loggedStates() == ["online"] }
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.displayedCount() == 1 }
        let mark = lab.fixture.path("checked")
        #expect(!FileManager.default.fileExists(atPath: mark))

        // A click on the toast (its default action) is "Check now".
        #expect(try lab.desktop.dunstctl(["action", "0"]).status == 0)
        await Harness.waitUntil("the monitor was asked to check") { FileManager.default.fileExists(atPath: mark) }
        // The check found the network back: the outage ends and the toast closes.
        await Harness.waitUntil("online after the check") { lab.fixture.loggedStates().last == "online" }
        #expect(lab.fixture.loggedEvents().last?["reason"] as? String == "checked")
        await Harness.waitUntil("outage toast closed") { !lab.calls.closes.isEmpty }
    }

    @Test func aRestartedNotificationServerShowsTheOngoingOutageOnce() async throws {
        guard let lab = try await lab() else { return }
        defer { Task { await lab.fixture.stop() } }
        try lab.net.say("online", interface: "eth0")
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.outageToasts.count == 1 }

        lab.desktop.killNotificationServer()
        try await Task.sleep(for: .milliseconds(300))
        #expect(lab.fixture.process?.isRunning == true)
        try await lab.desktop.startNotificationServer()
        await Harness.waitUntil("shown again") { lab.outageToasts.count == 2 && lab.desktop.displayedCount() == 1 }
        let again = try #require(lab.outageToasts.dropFirst().first)
        #expect(again.replacesID == 0)
        #expect(again.summary == "Offline")
        try await Task.sleep(for: .milliseconds(500))
        #expect(lab.outageToasts.count == 2, "shown again once, not more")
    }

    @Test func withoutAnyNotificationServerTheDaemonRunsAndLogsTheFallback() async throws {
        guard let lab = try await lab(server: false) else { return }
        defer { Task { await lab.fixture.stop() } }
        try lab.net.say("online", interface: "eth0")
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("offline logged") { lab.fixture.loggedStates() == ["online", "offline"] }
        await Harness.waitUntil("fallback logged") { lab.fixture.daemonLog.contains("no notification server") }
        try lab.net.say("online", interface: "eth0")
        await Harness.waitUntil("online again") { lab.fixture.loggedStates() == ["online", "offline", "online"] }
        #expect(lab.fixture.process?.isRunning == true)
    }
}
