import Foundation
import LifelineTestKit
import Testing

/// Another program, or another user, pretending to be a peer Lifeline believes:
/// signals sent straight to the daemon's (or the CLI's) connections that claim
/// to come from NetworkManager, logind, the lifeline daemon or the bus itself.
/// What the user sees must not move, and the real peers are still followed.
@Suite(.serialized) struct SpoofedSignalsTests {
    /// A stock system bus with NetworkManager and logind (python-dbusmock, as
    /// root), and the user `nobody` sending, from one connection, unicast
    /// PropertiesChanged (Connectivity = PORTAL), NameOwnerChanged and
    /// PrepareForSleep to each of the daemon's system-bus connections.
    @Test(.requires(StockSystemBus.requirement, NetworkManagerMock.requirement, LogindMock.requirement)) func anotherUserCannotSpeakForNetworkManagerOrLogind() async throws {
        let bus = try StockSystemBus.start()
        let nm = NetworkManagerMock(bus: bus)
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "1")
        let logind = try LogindMock(bus: bus)
        let fixture = try DaemonFixture(extraEnvironment: logind.environment)
        try fixture.writeConfig("""
            [debounce]
            down = "300ms"
            up = "300ms"

            [[monitor]]
            kind = "networkmanager"

            [[monitor]]
            kind = "logind"

            [[sink]]
            kind = "log"
            """)
        try fixture.start()
        defer { fixture.stopNow() }
        #expect(await fixture.waitForState("online", timeout: .seconds(15)), "\(fixture.daemonLog)")
        #expect(await Harness.waitUntil(timeout: .seconds(15), "logind followed, with its inhibitor lock") {
            (try? logind.inhibitorCount()) == 1
        })
        let published = fixture.loggedEvents().count

        let pid = try #require(fixture.process?.pid)
        let reached = try StockSystemBus.spoof("system", at: bus.address, pid: pid)
        // NetworkManager's connection and logind's.
        #expect(reached.count >= 2, "\(reached)")
        // Well past the debounce: a spoof believed would be published by now.
        try await Task.sleep(for: .seconds(2))
        #expect(fixture.loggedEvents().count == published, "\(fixture.loggedStates())")
        #expect(try fixture.cli(["status", "--json"]).stdout.contains("\"online\""))
        #expect(try logind.inhibitorCount() == 1, "the sleep inhibitor lock was released")
        #expect(!fixture.daemonLog.contains("suspending"), "\(fixture.daemonLog)")
        #expect(!fixture.daemonLog.contains("NetworkManager left the system bus"), "\(fixture.daemonLog)")

        // The real NetworkManager is still followed, at once.
        try nm.set("connectivity", "2")
        #expect(await fixture.waitForState("portal", timeout: .seconds(5)))
        // And logind's real PrepareForSleep still holds alerts and lets the machine sleep.
        try logind.prepareForSleep(true)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the lock released on sleep") {
            (try? logind.inhibitorCount()) == 0
        })
        #expect(fixture.daemonLog.contains("suspending"))
        #expect(await fixture.stop() == 0)
    }

    /// `wait-online` and `run` on the session bus: another process there sends
    /// them a StateChanged (online), JobsRequested (cancel) and NameOwnerChanged
    /// (the daemon left, then that process took its name). `wait-online` does
    /// not return, `run` neither starts nor ends; the daemon's real `online` then
    /// lets both go.
    @Test(.requires(.tools(["dbus-daemon"]), StockSystemBus.requirement)) func anotherProgramCannotSpeakForTheDaemonToRunOrWaitOnline() async throws {
        let bus = try PrivateBus()
        let fixture = try DaemonFixture(extraEnvironment: bus.environment)
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"dbus\""))
        try fixture.start()
        defer { fixture.stopNow() }
        try network.say("offline", reason: "cable pulled")
        #expect(await fixture.waitForState("offline", timeout: .seconds(10)), "\(fixture.daemonLog)")

        let marker = fixture.path("ran")
        let waiting = try Spawned([Harness.binary, "wait-online", "--timeout", "60s"], environment: fixture.environment)
        let running = try Spawned([Harness.binary, "run", "--timeout", "60s", "--", "touch", marker], environment: fixture.environment)
        defer {
            waiting.kill()
            running.kill()
        }
        // Both are subscribed once `run`'s job is on the board.
        #expect(await Harness.waitUntil(timeout: .seconds(10), "run's job listed") {
            (try? Harness.run(["gdbus", "call", "--address", bus.address, "--dest", "org.lifeline.Lifeline1",
                               "--object-path", "/org/lifeline/Lifeline1", "--method", "org.freedesktop.DBus.Properties.Get",
                               "org.lifeline.Lifeline1", "Jobs"]).stdout.contains("touch")) == true
        })
        for client in [waiting, running] {
            let reached = try StockSystemBus.spoof("session", at: bus.address, pid: client.pid, asNobody: false)
            #expect(reached.count == 1, "\(reached)")
        }
        try await Task.sleep(for: .seconds(1))
        #expect(waiting.isRunning, "wait-online believed a stranger")
        #expect(running.isRunning, "run believed a stranger")
        #expect(!FileManager.default.fileExists(atPath: marker), "run started its command on a stranger's word")

        try network.say("online", interface: "eth0")
        #expect(await Harness.waitUntil(timeout: .seconds(10), "wait-online returns") { !waiting.isRunning })
        #expect(waiting.exitStatus == 0)
        #expect(await Harness.waitUntil(timeout: .seconds(10), "run runs its command") { !running.isRunning })
        #expect(running.exitStatus == 0)
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(await fixture.stop() == 0)
    }
}
