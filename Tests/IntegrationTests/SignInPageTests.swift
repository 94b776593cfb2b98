import Foundation
import LifelineTestKit
import Testing

/// "Open sign-in page", from the toast on a real dunst and from the tray's
/// menu: a portal on loopback (a check server answering 302), a stand-in
/// `xdg-open` first on PATH that writes what it was given, and the daemon's
/// probe pointed at the portal.
@Suite(.serialized) struct SignInPageTests {
    /// A portal on a loopback port, the stand-in opener, and the environment
    /// that reaches both (no proxy, the opener first on PATH).
    final class Portal: @unchecked Sendable {
        let port = Int.random(in: 20000...29999)
        let folder: URL
        let opened: URL
        var server: Spawned?
        var url: String { "http://127.0.0.1:\(port)/check_network_status.txt" }

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-signin-\(getpid())-\(port)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            opened = folder.appendingPathComponent("opened.txt")
            let opener = folder.appendingPathComponent("xdg-open").path
            try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(opened.path)'; done\n"
                .write(toFile: opener, atomically: true, encoding: .utf8)
            chmod(opener, 0o755)
            try serve(.redirect)
        }

        deinit {
            server?.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        func serve(_ mode: ProbeLab.Mode) throws {
            server?.stop()
            let ready = folder.appendingPathComponent("\(mode.rawValue).ready")
            let p = try Spawned(["python3", ProbeLab.script, mode.rawValue, "127.0.0.1", "\(port)", folder.appendingPathComponent("requests.log").path],
                                stdout: .file(ready.path))
            server = p
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if (try? String(contentsOf: ready, encoding: .utf8))?.contains("ready") == true { return }
                usleep(10_000)
            }
            throw ProbeLab.LabError(description: "portal server did not start")
        }

        func environment(_ base: [String: String]) -> [String: String] {
            let path = folder.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            return base.merging(["PATH": path, "no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "",
                                 "HTTPS_PROXY": "", "ALL_PROXY": ""]) { $1 }
        }

        /// The probe alone (no link monitor: the kernel routes it to loopback),
        /// retrying slowly once the portal is seen, and `sinks`.
        func config(sinks: [String]) -> String {
            """
            [debounce]
            down = "0s"
            up = "0s"

            [[monitor]]
            kind = "probe"
            url = "\(url)"
            interval = "30s"
            timeout = "1s"

            """ + sinks.map { "[[sink]]\nkind = \"\($0)\"\n" }.joined(separator: "\n")
        }

        var openedURLs: [String] {
            ((try? String(contentsOf: opened, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// After the browser opened: the user signs in (the portal lets the
        /// check through) and is back online within seconds, though the probe's
        /// own retries have backed off to 8 s and more by then.
        func signInAndExpectOnline(_ fixture: DaemonFixture) async throws {
            try serve(.ok)
            let start = ContinuousClock.now
            #expect(await fixture.waitForState("online", timeout: .seconds(6)))
            #expect(ContinuousClock.now - start <= .seconds(4), "online \(ContinuousClock.now - start) after signing in")
        }
    }

    @Test(.requires(.tools(Desktop.tools + ["python3"]))) func theToastsOpenSignInPageStartsTheBrowserOnTheCheckURL() async throws {
        let portal = try Portal()
        let desktop = try Desktop()
        let fixture = try DaemonFixture(extraEnvironment: portal.environment(desktop.environment))
        let rc = fixture.path("dunstrc")
        try "[signin]\n    summary = \"Sign in to the network\"\n    action_name = \"signin\"\n"
            .write(toFile: rc, atomically: true, encoding: .utf8)
        await Harness.waitUntil("Xvfb on \(desktop.display)") {
            (try? Harness.run(["xwininfo", "-root", "-display", desktop.display]).status) == 0
        }
        let dunst = try Spawned(["dunst", "-config", rc], environment: desktop.environment)
        defer { dunst.kill() }
        await Harness.waitUntil("dunst on the bus") { (try? desktop.dunstctl(["is-paused"]).status) == 0 }
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        defer { monitor.stop() }
        await Desktop.waitUntilMonitoring(monitor)
        try fixture.writeConfig(portal.config(sinks: ["libnotify", "log"]))
        try fixture.start()
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        await Harness.waitUntil("the portal toast") { NotificationCalls(monitor.output).notifies.last?.summary == "Sign in to the network" }
        let toast = try #require(NotificationCalls(monitor.output).notifies.last)
        #expect(toast.actionLabels.contains("Open sign-in page"), "\(toast.actions)")
        // The redirect's target is named by its host in the toast, never opened,
        // and never an address a notification server could make a link of.
        #expect(toast.body.contains("redirected to 127.0.0.1"), "\(toast.body)")
        #expect(!toast.body.contains("/login") && !toast.body.contains("http://"), "\(toast.body)")

        try await Task.sleep(for: .seconds(8))  // the probe's retries back off
        #expect(try desktop.dunstctl(["action", "0"]).status == 0)
        await Harness.waitUntil(timeout: .seconds(5), "xdg-open ran") { !portal.openedURLs.isEmpty }
        #expect(portal.openedURLs == [portal.url])
        try await portal.signInAndExpectOnline(fixture)
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(TrayWatcher.requirement, .tools(["python3"]))) func theTrayMenusOpenSignInPageStartsTheBrowserOnTheCheckURL() async throws {
        let portal = try Portal()
        let bus = try PrivateBus()
        let fixture = try DaemonFixture(extraEnvironment: portal.environment(bus.environment))
        try fixture.writeConfig(portal.config(sinks: ["tray", "log"]))
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        await Harness.waitUntil("the menu offers the sign-in page") {
            ((try? watcher.menu(of: name, path: "/StatusNotifierItem/Menu")) ?? nil)?.labels.contains("Open sign-in page") == true
        }
        try await Task.sleep(for: .seconds(8))  // the probe's retries back off
        #expect(try watcher.host(["click", name, "/StatusNotifierItem/Menu", "Open sign-in page"]).status == 0)
        await Harness.waitUntil(timeout: .seconds(5), "xdg-open ran") { !portal.openedURLs.isEmpty }
        #expect(portal.openedURLs == [portal.url])
        try await portal.signInAndExpectOnline(fixture)
        // Online: the item is gone from the menu.
        await Harness.waitUntil("the menu drops the sign-in page") {
            ((try? watcher.menu(of: name, path: "/StatusNotifierItem/Menu")) ?? nil)?.labels == ["Check now", "Mute for 1 hour", "Recent outages", "Open log"]
        }
        #expect(await fixture.stop() == 0)
    }
}

/// On a metered connection (python-dbusmock's NetworkManager saying
/// Metered yes) the probe asks every `metered_interval` while online.
@Suite(.serialized) struct MeteredProbeTests {
    func requests(_ portal: SignInPageTests.Portal) -> Int {
        ((try? String(contentsOf: portal.folder.appendingPathComponent("requests.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").count
    }

    /// Requests at the check server in `window`, once online, with NetworkManager's Metered at `metered`.
    func requestsInWindow(metered: String, window: Duration) async throws -> Int {
        let portal = try SignInPageTests.Portal()
        try portal.serve(.ok)
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Phone hotspot", "802-11-wireless", "wlan0", metered)
        let fixture = try DaemonFixture(extraEnvironment: portal.environment(nm.environment))
        try fixture.writeConfig("""
            [[monitor]]
            kind = "networkmanager"

            [[monitor]]
            kind = "probe"
            url = "\(portal.url)"
            interval = "1s"
            metered_interval = "6s"
            timeout = "1s"

            [[sink]]
            kind = "log"
            """)
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        try await Task.sleep(for: .seconds(2))  // the start's probes are over
        let before = requests(portal)
        try await Task.sleep(for: window)
        let count = requests(portal) - before
        #expect(await fixture.stop() == 0)
        await nm.stop()
        return count
    }

    @Test(.requires(NetworkManagerMock.requirement, .tools(["python3"]))) func onlineRoundsComeEveryMeteredIntervalOnAMeteredLink() async throws {
        // 13 s: every 6 s is 2 or 3 rounds; every 1 s would be 10 or more.
        let metered = try await requestsInWindow(metered: "1", window: .seconds(13))
        #expect((1...3).contains(metered), "\(metered) requests in 13 s while metered")
        let unmetered = try await requestsInWindow(metered: "2", window: .seconds(13))
        #expect(unmetered >= 8, "\(unmetered) requests in 13 s while not metered")
    }
}
