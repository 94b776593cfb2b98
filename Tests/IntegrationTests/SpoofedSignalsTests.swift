import Foundation
import LifelineTestKit
import Testing

/// Another program, or another user, pretending to be a peer Lifeline believes:
/// signals sent straight to the daemon's (or the CLI's) connections that claim
/// to come from NetworkManager, logind, the lifeline daemon or the bus itself.
/// What the user sees must not move, and the real peers are still followed.
@Suite(.serialized) struct SpoofedSignalsTests {
    /// A stock system bus with NetworkManager and logind (python-dbusmock, as
    /// root), and the daemon following both (with the `dbus` sink on `session`
    /// when given), online and holding logind's inhibitor lock.
    func followingBoth(session: PrivateBus? = nil) async throws -> (PrivateBus, NetworkManagerMock, LogindMock, DaemonFixture) {
        let bus = try StockSystemBus.start()
        let nm = NetworkManagerMock(bus: bus)
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "1")
        let logind = try LogindMock(bus: bus)
        let fixture = try DaemonFixture(extraEnvironment: logind.environment.merging(session?.environment ?? [:]) { $1 })
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
            """ + (session == nil ? "" : "\n\n[[sink]]\nkind = \"dbus\"\n"))
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(15)), "\(fixture.daemonLog)")
        #expect(await Harness.waitUntil(timeout: .seconds(15), "logind followed, with its inhibitor lock") {
            (try? logind.inhibitorCount()) == 1
        })
        return (bus, nm, logind, fixture)
    }

    /// A stock system bus with NetworkManager and logind (python-dbusmock, as
    /// root), and the user `nobody` sending, from one connection, unicast
    /// PropertiesChanged (Connectivity = PORTAL), NameOwnerChanged and
    /// PrepareForSleep to each of the daemon's system-bus connections.
    @Test(.requires(StockSystemBus.requirement, NetworkManagerMock.requirement, LogindMock.requirement)) func anotherUserCannotSpeakForNetworkManagerOrLogind() async throws {
        let (bus, nm, logind, fixture) = try await followingBoth()
        defer { fixture.stopNow() }
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

    /// Another user sends 30 MiB signals (one `ay`: a stranger's noise, and the
    /// same bytes under logind's and NetworkManager's signal names) to each of
    /// the daemon's system-bus connections, three in a row. They are dropped
    /// on their sender before a byte of them is read: the daemon's peak memory
    /// grows by less than 64 MB, and `GetStatus` on the session bus answers
    /// within 500 ms throughout. Both peers are still followed afterwards.
    @Test(.requires(StockSystemBus.requirement, NetworkManagerMock.requirement, LogindMock.requirement, .tools(["gdbus"])))
    func aStrangersBigSignalsCostNeitherMemoryNorTheSessionInterface() async throws {
        let session = try PrivateBus()
        let (bus, nm, logind, fixture) = try await followingBoth(session: session)
        defer { fixture.stopNow() }
        let gauge = try #require(fixture.gauge)
        func peakKiB() -> Int { Int(gauge.status("VmHWM")?.split(separator: " ").first ?? "") ?? 0 }
        let before = peakKiB()

        let pid = try #require(fixture.process?.pid)
        let sender = try Spawned(StockSystemBus.spoofArgv("big", at: bus.address, pid: pid, count: 3), stdout: .capture, stderr: .capture)
        defer { sender.kill() }
        var slowest = Duration.zero
        var calls = 0
        /// One `GetStatus` on the session bus, timed.
        func getStatus() throws {
            let start = ContinuousClock.now
            let r = try Harness.run(["gdbus", "call", "--address", session.address, "--dest", "org.lifeline.Lifeline1",
                                     "--object-path", "/org/lifeline/Lifeline1", "--method", "org.lifeline.Lifeline1.GetStatus",
                                     "--timeout", "10"])
            slowest = max(slowest, ContinuousClock.now - start)
            calls += 1
            #expect(r.status == 0, "GetStatus: \(r.stderr)")
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while sender.isRunning, ContinuousClock.now < deadline { try getStatus() }
        #expect(sender.exitStatus == 0, "\(String(decoding: sender.capturedStderr, as: UTF8.self))")
        let reached = String(decoding: sender.capturedStdout, as: UTF8.self).split(separator: "\n")
        #expect(reached.count >= 2, "\(reached)")

        // The bus hands each connection its messages in order: once the real
        // peers' next words are taken, every stranger's message before them was too.
        try nm.set("connectivity", "2")
        try logind.setSessionActive(false)
        #expect(await Harness.waitUntil(timeout: .seconds(60), "both peers heard after the noise") {
            (try? getStatus()) != nil && fixture.loggedStates().last == "portal"
                && fixture.daemonLog.contains("session is inactive")
        }, "\(fixture.daemonLog)")
        let grown = peakKiB() - before
        print("strangers' 30 MiB signals: peak memory \(before) → \(peakKiB()) KiB; GetStatus at worst \(slowest) over \(calls) calls")
        #expect(grown < 64 * 1024, "peak memory grew by \(grown) KiB")
        #expect(slowest < .milliseconds(500), "GetStatus took \(slowest) at worst over \(calls) calls")
        #expect(try logind.inhibitorCount() == 1, "the sleep inhibitor lock was released")
        #expect(!fixture.daemonLog.contains("suspending"), "\(fixture.daemonLog)")
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
