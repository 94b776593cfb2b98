import Foundation
import LifelineTestKit
import Testing

/// A browser the user left open from "Open sign-in page" wakes nothing: the
/// daemon learns of its end from its pidfd, and until then only the probe's
/// rounds wake the daemon. The browser is a stand-in `xdg-open` that stays
/// running (it records its pid and sleeps), started from the tray's menu.
@Suite(.serialized) struct QuietOpenerTests {
    @Test(.requires(TrayWatcher.requirement, .tools(["python3", "dbus-daemon"]))) func aBrowserLeftOpenWakesNothingButTheProbe() async throws {
        let portal = try SignInPageTests.Portal()
        // The browser: it says what it was given and who it is, then stays.
        let browserPID = portal.folder.appendingPathComponent("browser.pid")
        try """
            #!/bin/sh
            for a in "$@"; do printf '%s\\n' "$a" >> '\(portal.opened.path)'; done
            echo $$ > '\(browserPID.path)'
            exec sleep 600
            """.write(toFile: portal.folder.appendingPathComponent("xdg-open").path, atomically: true, encoding: .utf8)
        chmod(portal.folder.appendingPathComponent("xdg-open").path, 0o755)
        defer {
            if let text = try? String(contentsOf: browserPID, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(pid, SIGKILL)
            }
        }
        let bus = try PrivateBus()
        let fixture = try DaemonFixture(extraEnvironment: portal.environment(bus.environment))
        // The probe's rounds come every 30 s once online: the window below
        // fits between two of them.
        try fixture.writeConfig(portal.config(sinks: ["tray", "log"]))
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()
        defer { fixture.stopNow() }
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        await Harness.waitUntil("the menu offers the sign-in page") {
            ((try? watcher.menu(of: name, path: "/StatusNotifierItem/Menu")) ?? nil)?.labels.contains("Open sign-in page") == true
        }
        #expect(try watcher.host(["click", name, "/StatusNotifierItem/Menu", "Open sign-in page"]).status == 0)
        await Harness.waitUntil(timeout: .seconds(5), "the browser runs") { (try? String(contentsOf: browserPID, encoding: .utf8)) != nil }
        #expect(portal.openedURLs == [portal.url])
        try await portal.signInAndExpectOnline(fixture)

        // Online, the browser still open: a window longer than any look a
        // poll for its end would make (the old one looked every 5 s), in which
        // no thread of the daemon wakes.
        let pid = try #require(fixture.process?.pid)
        let (quiet, last) = try await QuietDaemonTests.quietWindow(pid: pid, length: .seconds(12), within: .seconds(45))
        #expect(quiet, "no 12 s without a wake-up in 45 s with the browser open; the last window: \(last)")

        // Closed, the browser is reaped: no zombie is left behind.
        let browser = try #require(Int32(String(contentsOf: browserPID, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(browser, SIGTERM)
        await Harness.waitUntil(timeout: .seconds(5), "the browser is reaped") { kill(browser, 0) != 0 }
        #expect(kill(browser, 0) != 0 && errno == ESRCH)
        #expect(await fixture.stop() == 0)
    }
}
