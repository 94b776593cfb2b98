import Foundation
import Testing

/// The toast against a real notification server: dunst under Xvfb on a private bus.
@Suite(.serialized, .requires(.tools(Desktop.tools + ["dbus-send"]))) struct NotifyTests {
    struct Lab {
        let desktop: Desktop
        let fixture: DaemonFixture
        let net: ScriptedNetwork
        let monitor: BackgroundProcess

        var calls: NotificationCalls { NotificationCalls(monitor.output) }
        var outageToasts: [NotificationCalls.Notify] { calls.notifies.filter { $0.summary != "Back online" } }
    }

    /// Starts the desktop (with `server`, dunst by default), a Notify watcher and the daemon.
    /// With `checkAnswer`, the monitor answers each "check" with that JSON observation.
    func lab(server: NotificationServer? = .dunst, checkAnswer: String? = nil, down: String = "300ms", up: String = "200ms",
             dbus: Bool = false) async throws -> Lab {
        let desktop = try Desktop()
        if let server { try await desktop.startNotificationServer(server) }
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment)
        let net: ScriptedNetwork
        if let checkAnswer {
            // A monitor that answers "check" on stdin and leaves a mark.
            net = ScriptedNetwork(fixture: fixture)
            let mark = fixture.path("checked")
            let script = try fixture.writeScript("checker.sh", """
                #!/bin/sh
                tail -n +1 -F "\(net.feed)" &
                while read -r line; do
                  [ "$line" = check ] && touch "\(mark)" && echo '\(checkAnswer)'
                done
                """)
            try fixture.writeConfig("""
                [debounce]
                down = "\(down)"
                up = "\(up)"
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
                up = "\(up)"
                \(net.monitorTOML)
                [[sink]]
                kind = "libnotify"
                [[sink]]
                kind = "log"
                \(dbus ? "[[sink]]\nkind = \"dbus\"" : "")
                """)
        }
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        await Desktop.waitUntilMonitoring(monitor)
        try fixture.start()
        return Lab(desktop: desktop, fixture: fixture, net: net, monitor: monitor)
    }

    @Test func oneToastPerOutageUpdatedInPlaceAndTurnedIntoBackOnline() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "wlan0")
        await lab.fixture.waitForLogged(["online"])
        #expect(lab.calls.notifies.isEmpty, "no toast because the daemon started")

        try lab.net.say("offline", reason: "default route via wlan0 removed")
        await Harness.waitUntil("offline toast") { lab.outageToasts.count == 1 && lab.desktop.displayedCount() == 1 }
        let first = try #require(lab.outageToasts.first)
        #expect(first.appName == "Lifeline")
        #expect(first.replacesID == 0)
        #expect(first.summary == "Offline")
        #expect(first.icon == "network-offline")
        #expect(first.body == "Default route via wlan0 removed.")
        // A click is "Check now", and no server draws that button twice.
        #expect(first.actions.first == "default")
        #expect(first.actionLabels.sorted() == ["Check now", "Mute for 1 hour"])

        let shot = try lab.desktop.screenshot(named: "notify-offline-toast.png")
        let colours = try Harness.run(["identify", "-format", "%k", shot.path]).stdout
        #expect((Int(colours) ?? 0) > 2, "the screenshot is blank (\(colours) colours)")

        try lab.net.say("portal", interface: "wlan0", reason: "redirected to http://login.hotel.test/")
        await Harness.waitUntil("updated in place") { lab.outageToasts.count == 2 }
        let update = try #require(lab.outageToasts.dropFirst().first)
        #expect(update.replacesID != 0, "the update must replace the first toast")
        #expect(update.summary == "Sign in to the network")
        // The portal by its host: nothing a notification server could make a link of.
        #expect(update.body.contains("Redirected to login.hotel.test."), "\(update.body)")
        #expect(lab.desktop.displayedCount() == 1)

        // Recovery turns the outage toast into "Back online" in place: no close, no second toast.
        try lab.net.say("online", interface: "wlan0")
        await Harness.waitUntil("back online") { lab.calls.notifies.last?.summary == "Back online" }
        let back = try #require(lab.calls.notifies.last)
        #expect(back.replacesID == update.replacesID)
        #expect(back.body.hasPrefix("Back online via wlan0 — offline for"))
        #expect(lab.calls.closes.isEmpty)
        #expect(lab.desktop.displayedCount() == 1)
        #expect(lab.outageToasts.filter { $0.replacesID == 0 }.count == 1)
    }

    @Test func fiftyFlapsInTenSecondsMakeOneToast() async throws {
        // A recovery must hold 2 s, forty times the 50 ms the cable stays up: a
        // paused test process stretches an up phase, but not that far.
        let lab = try await lab(up: "2s")
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        // A loose cable: down 150 ms, up 50 ms, fifty times; recovery never holds.
        for _ in 0..<50 {
            try lab.net.say("offline", reason: "carrier lost on eth0")
            try await Task.sleep(for: .milliseconds(150))
            try lab.net.say("online", interface: "eth0")
            try await Task.sleep(for: .milliseconds(50))
        }
        // The storm is one outage: published once, ended once.
        await lab.fixture.waitForLogged(["online", "offline", "online"])
        await Harness.waitUntil("back online") { lab.calls.notifies.last?.summary == "Back online" }
        #expect(lab.outageToasts.count == 1, "one toast, never a stack: \(lab.outageToasts.map(\.summary))")
        #expect(lab.outageToasts.first?.replacesID == 0)
    }

    @Test func checkNowOnTheToastRunsACheck() async throws {
        let lab = try await lab(checkAnswer: #"{"state":"online","interface":"eth0","reason":"checked"}"#)
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.displayedCount() == 1 }
        let mark = lab.fixture.path("checked")
        #expect(!FileManager.default.fileExists(atPath: mark))

        // A click on the toast (its default action) is "Check now".
        #expect(try lab.desktop.dunstctl(["action", "0"]).status == 0)
        await Harness.waitUntil("the monitor was asked to check") { FileManager.default.fileExists(atPath: mark) }
        // The check found the network back: the outage ends and the toast says so.
        await Harness.waitUntil("online after the check") { lab.fixture.loggedStates().last == "online" }
        #expect(lab.fixture.loggedEvents().last?["reason"] as? String == "checked")
        await Harness.waitUntil("back online on screen") {
            lab.calls.notifies.last?.summary == "Back online" && lab.desktop.displayedCount() == 1
        }
    }

    @Test func checkNowThatFindsTheNetworkStillDownSaysSo() async throws {
        let lab = try await lab(checkAnswer: #"{"state":"offline","reason":"cable pulled"}"#)
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.displayedCount() == 1 }

        // dunst closes a toast whose action was invoked; the answer must still be seen.
        #expect(try lab.desktop.dunstctl(["action", "0"]).status == 0)
        await Harness.waitUntil("the answer on screen") {
            lab.outageToasts.last?.body == "Checked just now: still offline. Cable pulled." && lab.desktop.displayedCount() == 1
        }
        #expect(lab.outageToasts.last?.summary == "Offline")
        // Asking was no dismissal: a change of state within the outage still shows.
        try lab.net.say("portal", interface: "eth0", reason: "redirected to http://login.test/")
        await Harness.waitUntil("portal shown") {
            lab.outageToasts.last?.summary == "Sign in to the network" && lab.desktop.displayedCount() == 1
        }
    }

    /// xfce4-notifyd closes a toast whose button was clicked, with the reason
    /// "dismissed by the user"; the answer to "Check now" must come back anyway.
    @Test(.requires(NotificationServer.xfce4Notifyd.requirement, .tools(["xdotool"])))
    func checkNowOnAServerThatClosesTheToastBringsTheAnswerBack() async throws {
        let lab = try await lab(server: .xfce4Notifyd, checkAnswer: #"{"state":"offline","reason":"cable pulled"}"#)
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.viewableWindows(of: .xfce4Notifyd) == 1 }
        try lab.desktop.clickFirstButton(of: .xfce4Notifyd)
        await Harness.waitUntil("the answer, shown again") {
            lab.outageToasts.last?.body == "Checked just now: still offline. Cable pulled."
                && lab.desktop.viewableWindows(of: .xfce4Notifyd) == 1
        }
        #expect(FileManager.default.fileExists(atPath: lab.fixture.path("checked")))
    }

    @Test func aDismissedToastStaysAwayUntilTheStateChanges() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.displayedCount() == 1 }
        #expect(try lab.desktop.dunstctl(["close"]).status == 0)
        await Harness.waitUntil("closed by the user") { lab.desktop.displayedCount() == 0 }
        try lab.net.say("offline", reason: "still no carrier")
        await Harness.waitUntil("published") {
            ((try? String(contentsOfFile: lab.fixture.stateFilePath, encoding: .utf8)) ?? "").contains("still no carrier")
        }
        try await Task.sleep(for: .milliseconds(300))  // not a readiness wait: a window in which no toast may come
        try lab.net.say("portal", interface: "eth0", reason: "redirected to http://login.test/")
        await Harness.waitUntil("portal shown") { lab.outageToasts.last?.summary == "Sign in to the network" }
        #expect(lab.outageToasts.map(\.summary) == ["Offline", "Sign in to the network"], "the dismissed state came back: \(lab.outageToasts.map(\.body))")
        #expect(lab.desktop.displayedCount() == 1)
    }

    /// notification-daemon ignores CloseNotification: a close-then-new left the
    /// outage toast on screen with "Back online" queued behind it.
    @Test(arguments: [NotificationServer.notificationDaemon, .xfce4Notifyd])
    func recoveryLeavesOnlyBackOnlineOnScreen(_ server: NotificationServer) async throws {
        try Harness.require(server.requirement)
        let lab = try await lab(server: server)
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("outage toast on screen") {
            lab.outageToasts.count == 1 && lab.desktop.viewableWindows(of: server) == 1
        }
        try lab.net.say("online", interface: "eth0")
        await Harness.waitUntil("back online") { lab.calls.notifies.last?.summary == "Back online" }
        let back = try #require(lab.calls.notifies.last)
        #expect(back.replacesID != 0, "Back online replaces the outage toast")
        #expect(lab.calls.closes.isEmpty)
        try await Task.sleep(for: .milliseconds(500))  // not a readiness wait: the server has drawn by now
        #expect(lab.desktop.viewableWindows(of: server) == 1, "one toast on screen, and it is Back online")
    }

    /// `Mute(seconds)` on the daemon's D-Bus interface, as `lifeline` and the toast's button do.
    func mute(_ lab: Lab, seconds: Int) throws {
        let r = try Harness.run(["dbus-send", "--session", "--print-reply", "--dest=org.lifeline.Lifeline1", "/org/lifeline/Lifeline1",
                                 "org.lifeline.Lifeline1.Mute", "uint32:\(seconds)"], environment: lab.desktop.environment)
        #expect(r.status == 0, "Mute failed: \(r.stderr)")
    }

    @Test func aMuteThatRunsOutDuringAnOutageShowsItsToast() async throws {
        let lab = try await lab(dbus: true)
        defer { lab.fixture.stopNow() }
        await Harness.waitUntil("serving") { lab.fixture.daemonLog.contains("serving org.lifeline.Lifeline1") }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        let muted = ContinuousClock.now  // before the call: the mute starts while it is answered
        try mute(lab, seconds: 2)
        try lab.net.say("offline", reason: "cable pulled")
        await lab.fixture.waitForLogged(["online", "offline"])
        // No update comes when a mute runs out: the sink has to notice by itself.
        await Harness.waitUntil("shown when the mute ran out") { lab.outageToasts.count == 1 && lab.desktop.displayedCount() == 1 }
        #expect(ContinuousClock.now - muted >= .seconds(2), "shown while muted")
        #expect(lab.outageToasts.first?.summary == "Offline")
    }

    @Test func noBackOnlineForAnOutageNobodySaw() async throws {
        let lab = try await lab(dbus: true)
        defer { lab.fixture.stopNow() }
        await Harness.waitUntil("serving") { lab.fixture.daemonLog.contains("serving org.lifeline.Lifeline1") }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try mute(lab, seconds: 3600)
        try lab.net.say("offline", reason: "cable pulled")
        await lab.fixture.waitForLogged(["online", "offline"])
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online", "offline", "online"])
        try mute(lab, seconds: 0)
        // A later outage is shown: proof that the sink went on reading, and that nothing came before it.
        try lab.net.say("offline", reason: "second outage")
        await Harness.waitUntil("the next outage") { lab.outageToasts.count >= 1 }
        #expect(lab.calls.notifies.map(\.body) == ["Second outage."], "no Back online for the muted outage")
    }

    @Test func theToastGoesWhenTheDaemonStops() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        try lab.net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.desktop.displayedCount() == 1 }
        // Nobody keeps it true any more: it must not stay on screen.
        #expect(await lab.fixture.stop() == 0)
        #expect(lab.calls.closes.count == 1)
        await Harness.waitUntil("closed on screen") { lab.desktop.displayedCount() == 0 }
    }

    /// Reasons come from the network and from any program an exec monitor runs:
    /// what dunst (which reads body markup) receives is text, never markup.
    @Test func hostileReasonsReachTheServerAsText() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online"])
        func say(reason: String) throws {
            let line = try JSONSerialization.data(withJSONObject: ["state": "offline", "reason": reason])
            try lab.net.raw(String(decoding: line, as: UTF8.self))
        }
        let cases: [(reason: String, body: String)] = [
            ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt;."),
            ("<span color=red>", "&lt;span color=red&gt;."),
            // An address, even inside markup, reaches it as its host alone.
            (#"<a href="https://phish/">Sign in</a>"#, "&lt;a href=&quot;phish&quot;&gt;Sign in&lt;/a&gt;."),
            ("a&b", "A&amp;b."),
        ]
        for (i, c) in cases.enumerated() {
            try say(reason: c.reason)
            await Harness.waitUntil("case \(i) at the server") { lab.outageToasts.last?.body == c.body }
        }
        // A terminal escape: the exec monitor already made its controls spaces;
        // whatever the spacing, no control character reaches the server.
        try say(reason: "\u{1b}]0;title\u{07}")
        await Harness.waitUntil("the escape case at the server") {
            guard let body = lab.outageToasts.last?.body, body.contains("]0;title") else { return false }
            return !body.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        // Invalid UTF-8 from a program's output: the server gets valid text, the rest of the line intact.
        try lab.net.say(line: Array(#"{"state":"offline","reason":"bad "#.utf8) + [0xFF, 0xFE, 0xC3] + Array(#" end"}"#.utf8) + [10])
        await Harness.waitUntil("invalid UTF-8 case at the server") {
            (lab.outageToasts.last?.body.hasPrefix("Bad ") ?? false) && (lab.outageToasts.last?.body.hasSuffix(" end.") ?? false)
        }
        // A megabyte of reason: bounded on the way, and still an update of the one toast.
        try say(reason: String(repeating: "<", count: 1 << 20))
        try say(reason: "done")
        await Harness.waitUntil("last case at the server") { lab.outageToasts.last?.body == "Done." }
        #expect(lab.outageToasts.allSatisfy { $0.body.utf8.count <= 4 * 600 }, "\(lab.outageToasts.map(\.body.utf8.count))")
        #expect(lab.outageToasts.filter { $0.replacesID == 0 }.count == 1)
        #expect(lab.desktop.displayedCount() == 1)
        #expect(lab.fixture.process?.isRunning == true)
    }

    @Test func aRestartedNotificationServerShowsTheOngoingOutageOnce() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
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
        let lab = try await lab(server: nil)
        defer { lab.fixture.stopNow() }
        try lab.net.say("online", interface: "eth0")
        try lab.net.say("offline", reason: "cable pulled")
        await lab.fixture.waitForLogged(["online", "offline"])
        await Harness.waitUntil("fallback logged") { lab.fixture.daemonLog.contains("no notification server") }
        try lab.net.say("online", interface: "eth0")
        await lab.fixture.waitForLogged(["online", "offline", "online"])
        #expect(lab.fixture.process?.isRunning == true)
    }
}
