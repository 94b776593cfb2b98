import Foundation
import Testing

/// One outage script against each notification server that runs here, checked
/// through what the server shows and through the server staying alive: offline →
/// limited → portal, "Check now" picked on the toast, back online, then a second
/// outage muted from its toast. (The other rules of the toast, on dunst:
/// `NotifyTests`.)
@Suite(.serialized) struct ToastServersTests {
    enum Server: String, CaseIterable, CustomStringConvertible, Sendable {
        case dunst
        case xfce4Notifyd = "xfce4-notifyd"
        case notificationDaemon = "notification-daemon"
        case mako, swaync
        case gnomeShell = "gnome-shell"
        case plasma

        var description: String { rawValue }

        /// Labels the server draws of a Notify's actions (as buttons or in its
        /// action menu): all but `default` (a click on the toast) where it hides that one.
        func drawn(_ call: NotificationCalls.Notify) -> [String] {
            let pairs = stride(from: 0, to: call.actions.count - 1, by: 2).map { (call.actions[$0], call.actions[$0 + 1]) }
            let drawsDefault: Set<Server> = [.dunst, .xfce4Notifyd, .mako]
            return pairs.filter { drawsDefault.contains(self) || $0.0 != "default" }.map(\.1)
        }

        /// Servers that tell what their toasts say (the others are read off the calls and pictures).
        var reportsText: Bool { self == .mako || self == .gnomeShell }
    }

    func screen(_ server: Server) async throws -> any ToastScreen {
        switch server {
        case .dunst, .xfce4Notifyd, .notificationDaemon:
            let x11: NotificationServer = server == .dunst ? .dunst : server == .xfce4Notifyd ? .xfce4Notifyd : .notificationDaemon
            try Harness.require(.all(.tools(Desktop.tools + ["dbus-monitor", "xdotool"]), x11.requirement))
            let screen = try X11ToastScreen(x11)
            try await screen.start()
            return screen
        case .mako, .swaync:
            let kind: SwayToastScreen.Server = server == .mako ? .mako : .swaync
            try Harness.require(.rootAnd(SwayToastScreen.tools(kind) + ["dbus-monitor"]))
            let screen = try SwayToastScreen(kind)
            try await screen.start()
            return screen
        case .gnomeShell:
            try Harness.require(.all(.rootAnd(GnomeShellScreen.tools + ["dbus-monitor"]), LogindMock.requirement))
            let screen = try GnomeShellScreen()
            try await screen.start()
            return screen
        case .plasma:
            try Harness.require(PlasmaDesktop.requirement(["dbus-monitor"]))
            let screen = try PlasmaToastScreen()
            try await screen.start()
            return screen
        }
    }

    /// The whole script on one server. A "Check now" that finds the portal still
    /// there is answered in the toast.
    @Test(arguments: Server.allCases) func oneOutageScriptOnEachServer(_ server: Server) async throws {
        let screen = try await screen(server)
        let fixture = try DaemonFixture(extraEnvironment: screen.environment)
        defer { fixture.stopNow() }
        let net = ScriptedNetwork(fixture: fixture)
        let mark = fixture.path("checked")
        let portal = #"{"state":"portal","interface":"wlan0","reason":"redirected to http://login.hotel.test/"}"#
        let checker = try fixture.writeScript("checker.sh", """
            #!/bin/sh
            tail -n +1 -F "\(net.feed)" &
            while read -r line; do
              [ "$line" = check ] && touch "\(mark)" && echo '\(portal)'
            done
            """)
        try fixture.writeConfig("""
            [debounce]
            down = "300ms"
            up = "200ms"
            [[monitor]]
            kind = "exec"
            command = ["\(checker)"]
            checks = true
            [[sink]]
            kind = "libnotify"
            [[sink]]
            kind = "log"
            """)
        let monitor = try NotificationCalls.watch(environment: screen.environment, output: URL(fileURLWithPath: fixture.path("notify.log")))
        defer { monitor.stop() }
        await Desktop.waitUntilMonitoring(monitor)
        try fixture.start()
        var calls: [NotificationCalls.Notify] { NotificationCalls(monitor.output).notifies.filter { $0.appName == "Lifeline" } }
        func shownOnce(_ summary: String) -> Bool {
            let shown = screen.shown()
            // swaync counts only what its control centre keeps, and it keeps no
            // transient toast: "Back online" is seen on the picture alone.
            if server == .swaync { return shown.count == (summary == "Back online" ? 0 : 1) }
            return shown.count == 1 && (!server.reportsText || shown[0].summary == summary)
        }
        var pictures: [URL] = []
        /// A bounded wait that says, when it fails, what was sent and what is shown.
        func wait(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) async {
            if !(await Harness.waitUntil(what, sourceLocation: sourceLocation, condition)) {
                Issue.record("sent: \(calls.map { "\($0.replacesID) \($0.summary)" }); shown: \(screen.shown())",
                             sourceLocation: sourceLocation)
            }
        }

        try net.say("online", interface: "wlan0")
        await wait("online") { fixture.loggedStates() == ["online"] }
        try net.say("offline", reason: "cable pulled")
        await wait("offline toast") { calls.count == 1 && shownOnce("Offline") }
        let first = try #require(calls.first)
        #expect(first.replacesID == 0)
        // Each action once as a button; a click on the toast is Check now too.
        #expect(server.drawn(first).sorted() == ["Check now", "Mute for 1 hour"], "\(first.actions)")
        if server.reportsText { #expect(screen.shown().first?.buttons.sorted() == ["Check now", "Mute for 1 hour"]) }
        pictures.append(try await screen.screenshot(named: "toast-\(server)-offline.png", showing: "Offline"))

        try net.say("limited", interface: "wlan0", reason: "no answer from the check server")
        await wait("limited, in place") { calls.last?.summary == "Connected, but no internet" }
        #expect(calls.last?.replacesID != 0, "the update must replace the first toast")
        // An update in place names the toast by its id and nothing else.
        #expect(calls.dropFirst().allSatisfy { !$0.hints.contains("x-canonical-private-synchronous") && !$0.hints.contains("x-dunst-stack-tag") },
                "\(calls.map(\.hints))")
        await wait("one toast") { shownOnce("Connected, but no internet") }
        #expect(screen.serverIsRunning, "\(screen.serverName) died on an update in place")

        try net.say("portal", interface: "wlan0", reason: "redirected to http://login.hotel.test/")
        await wait("portal, in place") { calls.last?.summary == "Sign in to the network" && shownOnce("Sign in to the network") }
        pictures.append(try await screen.screenshot(named: "toast-\(server)-portal.png", showing: "Sign in to the network"))

        if try await screen.pick("Check now") {
            await wait("the monitor was asked to check") { FileManager.default.fileExists(atPath: mark) }
            await wait("the answer on screen") {
                calls.last?.body.hasPrefix("Checked just now: still waiting for you to sign in.") == true
                    && shownOnce("Sign in to the network")
            }
        } else {
            // swaync takes clicks only, and headless sway has no pointer;
            // notification-daemon's buttons have no place known here: their
            // buttons are checked on the picture and in what they were sent.
            #expect(server == .swaync || server == .notificationDaemon)
        }

        try net.say("online", interface: "wlan0")
        await wait("back online") { calls.last?.summary == "Back online" && shownOnce("Back online") }
        #expect(calls.last?.replacesID != 0, "Back online replaces the outage toast")
        pictures.append(try await screen.screenshot(named: "toast-\(server)-online.png", showing: "Back online"))

        // A second outage, muted from its toast: it goes and stays away.
        try net.say("offline", reason: "cable pulled again")
        // Where the toast to click is found as a window, "Back online" must have gone first.
        await wait("second outage") { calls.last?.body == "Cable pulled again." && (server.reportsText || shownOnce("Offline")) }
        if try await screen.pick("Mute for 1 hour") {
            await wait("muted") { fixture.daemonLog.contains("toast: muted for 1 hour") }
            await wait("the toast went") {
                server.reportsText ? screen.shown().allSatisfy { $0.summary != "Offline" } : screen.shown().isEmpty
            }
            let before = calls.count
            try net.say("limited", interface: "wlan0", reason: "still no internet")
            await wait("published") { fixture.loggedStates().last == "limited" }
            try await Task.sleep(for: .milliseconds(300))  // not a readiness wait: a window in which no toast may come
            #expect(calls.count == before, "a toast while muted: \(calls.suffix(1).map(\.summary))")
        }
        #expect(screen.serverIsRunning, "\(screen.serverName) died")
        #expect(fixture.process?.isRunning == true)

        // One picture per server: offline, portal and back online side by side,
        // each cut to the corner where the server draws its toasts.
        let all = pictures.map(\.path)
        let joined = all[0].replacingOccurrences(of: "-offline.png", with: ".png")
        let corner = switch server {
        case .gnomeShell: "560x150+360+0"
        case .plasma: "480x280+0+520"
        case .mako, .swaync: "520x150+760+0"
        case .dunst, .xfce4Notifyd, .notificationDaemon: "480x200+544+0"
        }
        _ = try? Harness.run(["convert"] + all.flatMap { ["(", $0, "-crop", corner, "+repage", ")"] } + ["+append", joined])
    }
}
