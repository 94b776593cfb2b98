import Foundation
import LifelineTestKit
import Testing

/// The first minutes on a new machine: no daemon yet, or a daemon started where
/// there is no session bus and no display (ssh, a container, a bare console).
@Suite(.serialized) struct FirstRunTests {
    @Test func statusWithoutADaemonSaysHowToStartOne() throws {
        let box = try Installation()
        let r = try Harness.run([Harness.binary, "status"], environment: try box.lonelyEnvironment())
        #expect(r.status == 3)
        #expect(r.stdout.isEmpty)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains("no daemon running") }, "\(r.stderr)")
        #expect(lines.contains { $0.contains("systemctl --user enable --now lifeline") }, "\(r.stderr)")
    }

    /// Each missing piece is one line, said once however many outages follow; the
    /// log, the state file and `status` keep working; the bus, once it appears, is used.
    @Test(.requires(.tools(["dbus-daemon"]))) func noSessionBusAndNoDisplayAreSaidOnceAndTheRestWorks() async throws {
        let f = try DaemonFixture(extraEnvironment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(net.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "log"

            [[sink]]
            kind = "libnotify"

            [[sink]]
            kind = "dbus"
            """))
        try f.start()
        defer { f.stopNow() }

        for (i, state) in ["online", "offline", "online", "offline", "online"].enumerated() {
            try net.say(state, interface: state == "online" ? "eth0" : "")
            await Harness.waitUntil("\(state) in the log") { f.loggedStates().count == i + 1 }
        }
        await f.waitForLogged(["online", "offline", "online", "offline", "online"])
        #expect(try f.cli(["status", "--format", "{state}"]).stdout == "online\n")

        // What a user sees: the fixture logs at debug level, a user's daemon at info.
        let log = f.daemonLog.split(separator: "\n").filter { !$0.contains(" debug ") && !$0.contains(" trace ") }
        let aboutTheBus = log.filter { $0.contains("session bus") && !$0.contains("notification server") }
        #expect(aboutTheBus.count == 1, "\(aboutTheBus)")
        let aboutTheDisplay = log.filter { $0.contains("no display") }
        #expect(aboutTheDisplay.count == 1, "\(f.daemonLog)")
        #expect(log.filter { $0.contains(" error ") }.isEmpty, "\(f.daemonLog)")

        // The bus appears where the daemon was told to look: it is found, and said so once.
        let socket = f.path("no-session-bus")
        let bus = try Spawned(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path=\(socket)"])
        defer { bus.kill() }
        await Harness.waitUntil(timeout: .seconds(20), "the daemon back on the session bus") {
            f.daemonLog.contains("back on the session bus")
        }
        #expect(f.daemonLog.components(separatedBy: "back on the session bus").count == 2)
    }
}
