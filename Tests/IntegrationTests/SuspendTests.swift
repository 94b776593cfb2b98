import Foundation
import LifelineCore
import LifelineTestKit
import Testing

/// Suspend, resume and the inactive session, with the real daemon: logind is
/// python-dbusmock's on a private stand-in system bus, the toasts go to a
/// notification server that logs every Notify, and the network is scripted.
@Suite(.serialized) struct SuspendTests {
    /// The scripted network, the logind monitor with its default grace (10 s),
    /// the toast and the event log.
    func startDaemon(logind: LogindMock, notifications: CountingNotificationServer) throws -> (DaemonFixture, ScriptedNetwork) {
        let fixture = try DaemonFixture(extraEnvironment: logind.environment.merging(notifications.environment) { $1 })
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 300, sinks: """
            [[monitor]]
            kind = "logind"

            [[sink]]
            kind = "libnotify"

            [[sink]]
            kind = "log"
            """))
        try fixture.start()
        return (fixture, network)
    }

    /// Online, with the inhibitor lock taken.
    func settle(_ fixture: DaemonFixture, _ network: ScriptedNetwork, _ logind: LogindMock) async throws {
        try network.say("online", interface: "wlan0")
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        #expect(await Harness.waitUntil(timeout: .seconds(15), "an inhibitor lock (daemon log: \(fixture.daemonLog))") {
            (try? logind.inhibitorCount()) == 1
        })
    }

    func suspend(_ fixture: DaemonFixture, _ logind: LogindMock) async throws {
        try logind.prepareForSleep(true)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the lock released on sleep") {
            (try? logind.inhibitorCount()) == 0
        })
    }

    /// Sleeps until `offset` after `start`: the scenario's own timing, not a wait for readiness.
    func at(_ offset: Duration, after start: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: start + offset, clock: .continuous)
    }

    @Test(.requires(LogindMock.requirement)) func aNetworkBackFiveSecondsAfterResumeShowsNoToastAtAll() async throws {
        let logind = try LogindMock()
        let notifications = try CountingNotificationServer()
        let (fixture, network) = try startDaemon(logind: logind, notifications: notifications)
        try await settle(fixture, network, logind)
        try await suspend(fixture, logind)

        try network.say("offline", reason: "default route via wlan0 removed")
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        try logind.prepareForSleep(false)
        let resumed = ContinuousClock.now
        try await at(.seconds(5), after: resumed)
        try network.say("online", interface: "wlan0")
        #expect(await fixture.waitForState("online", timeout: .seconds(4)))
        // Past the grace: the outage was over before it could alert.
        try await at(.seconds(12), after: resumed)
        #expect(notifications.notifies.isEmpty, "\(notifications.notifies)")
        // Every surface that shows the state saw it all.
        #expect(fixture.loggedStates() == ["online", "offline", "online"])
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(LogindMock.requirement)) func aNetworkStillGoneAfterTheGraceShowsExactlyOneToast() async throws {
        let logind = try LogindMock()
        let notifications = try CountingNotificationServer()
        let (fixture, network) = try startDaemon(logind: logind, notifications: notifications)
        try await settle(fixture, network, logind)
        try await suspend(fixture, logind)

        try network.say("offline", reason: "default route via wlan0 removed")
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        try logind.prepareForSleep(false)
        let resumed = ContinuousClock.now
        try await at(.seconds(8), after: resumed)
        #expect(notifications.notifies.isEmpty, "no toast within the grace: \(notifications.notifies)")
        try await at(.seconds(15), after: resumed)
        #expect(notifications.notifies.count == 1, "\(notifications.notifies)")
        #expect(notifications.notifies.first?.contains("\"Offline\"") == true, "\(notifications.notifies)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(LogindMock.requirement)) func theInhibitorLockIsTakenReleasedOnSleepAndTakenAgainOnResume() async throws {
        let logind = try LogindMock()
        let notifications = try CountingNotificationServer()
        let (fixture, network) = try startDaemon(logind: logind, notifications: notifications)
        try await settle(fixture, network, logind)
        #expect(logind.inhibitCalls.count == 1)
        #expect(logind.inhibitCalls.first?.contains("\"sleep\" \"Lifeline\"") == true, "\(logind.inhibitCalls)")
        #expect(logind.inhibitCalls.first?.hasSuffix("\"delay\"") == true, "\(logind.inhibitCalls)")

        // logind drops the lock only when the daemon closed every copy of its descriptor.
        try await suspend(fixture, logind)
        #expect(fixture.daemonLog.contains("suspending"), "\(fixture.daemonLog)")
        try logind.prepareForSleep(false)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "a new lock after resume") {
            (try? logind.inhibitorCount()) == 1
        })
        #expect(logind.inhibitCalls.count == 2)
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(LogindMock.requirement)) func anInactiveSessionHoldsTheToastUntilItIsActiveAgain() async throws {
        let logind = try LogindMock()
        let notifications = try CountingNotificationServer()
        let (fixture, network) = try startDaemon(logind: logind, notifications: notifications)
        try await settle(fixture, network, logind)

        try logind.setSessionActive(false)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the daemon to see the session inactive") {
            fixture.daemonLog.contains("session is inactive")
        })
        try network.say("offline", reason: "default route via wlan0 removed")
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        // Published well past the debounce: still nothing on screen.
        let published = ContinuousClock.now
        try await at(.seconds(2), after: published)
        #expect(notifications.notifies.isEmpty, "\(notifications.notifies)")

        try logind.setSessionActive(true)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the held toast") { notifications.notifies.count == 1 })
        try await at(.seconds(2), after: ContinuousClock.now)
        #expect(notifications.notifies.count == 1, "\(notifications.notifies)")
        #expect(await fixture.stop() == 0)
    }

    /// The log writes the sleep and the wake down (and the clean stop), and
    /// `history` counts the time asleep apart: the network that went while the
    /// machine slept is down only from the wake on.
    @Test(.requires(LogindMock.requirement)) func theLogWritesSleepAndWakeAndHistoryCountsTheTimeAsleepApart() async throws {
        let logind = try LogindMock()
        let notifications = try CountingNotificationServer()
        let (fixture, network) = try startDaemon(logind: logind, notifications: notifications)
        try await settle(fixture, network, logind)
        try await suspend(fixture, logind)
        await Harness.waitUntil(timeout: .seconds(5), "the sleep line") { fixture.loggedMarks().count == 1 }

        try network.say("offline", reason: "default route via wlan0 removed")
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        let asleep = ContinuousClock.now
        try await at(.seconds(3), after: asleep)
        try logind.prepareForSleep(false)
        let resumed = ContinuousClock.now
        try await at(.seconds(2), after: resumed)
        try network.say("online", interface: "wlan0")
        #expect(await fixture.waitForState("online", timeout: .seconds(5)))
        #expect(await fixture.stop() == 0)

        let marks = fixture.loggedMarks()
        #expect(marks.compactMap { $0["mark"] as? String } == ["sleep", "wake", "stop"], "\(marks)")
        for mark in marks { #expect(mark["sequence"] == nil, "a mark takes no sequence number: \(mark)") }
        let times = marks.compactMap { $0["since"] as? Int64 }
        let events = fixture.loggedEvents()
        let offline = try #require(events.first { $0["state"] as? String == "offline" }?["since"] as? Int64)
        let online = try #require(events.last { $0["state"] as? String == "online" }?["since"] as? Int64)
        #expect(times.count == 3)
        guard times.count == 3 else { return }
        let (slept, woke) = (times[0], times[1])
        #expect(marks[1]["asleep_since"] as? Int64 == slept)
        #expect(slept < offline && offline < woke && woke < online, "\(times) \(offline) \(online)")

        // history: one outage, from the wake to online; the sleep counted apart.
        let json = try fixture.cli(["history", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1, "\(json.stdout)")
        #expect(rows.first?["start"] as? Int64 == woke)
        #expect(rows.first?["end"] as? Int64 == online)
        let report = fixture.path("report.html")
        #expect(try fixture.cli(["history", "--report", report]).status == 0)
        let figures = ReportTests.figures(try String(contentsOfFile: report, encoding: .utf8))
        #expect(figures["Asleep"] == DurationText.human(.microseconds(woke - slept)), "\(figures)")
        #expect(figures["Downtime"] == DurationText.human(.microseconds(online - woke)), "\(figures)")
        // The log still numbers on from its last transition, past the marks.
        let again = try fixture.cli(["history"])
        #expect(again.stderr == "", "no line of the log is unreadable: \(again.stderr)")
    }

    /// With the real probe: after resume it asks the check server at once.
    @Test(.requires(ProbeTests.requirement, LogindMock.requirement)) func theProbeAsksTheCheckServerAtOnceOnResume() async throws {
        let logind = try LogindMock()
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // A long interval: any request right after resume is the check it asked for.
        let config = ProbeTests.config(url: lab.checkURL, interval: "5m") + """


            [[monitor]]
            kind = "logind"
            """
        let fixture = try ProbeTests().startDaemon(lab, config: config, environment: logind.environment)
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        #expect(await Harness.waitUntil(timeout: .seconds(15), "an inhibitor lock") { (try? logind.inhibitorCount()) == 1 })
        try await suspend(fixture, logind)
        let before = lab.requests(.ok).count

        try logind.prepareForSleep(false)
        let resumed = ContinuousClock.now
        // Minutes before the interval's next round: only the resume can have asked for it.
        #expect(await Harness.waitUntil(timeout: .seconds(30), "a probe request after resume") {
            lab.requests(.ok).count > before
        })
        print("SuspendTests: the first probe request came \(ContinuousClock.now - resumed) after resume")
        #expect(await fixture.stop() == 0)
    }
}

/// Without logind, or without a system bus, the monitor is quiet, and it
/// follows logind once it appears.
@Suite(.serialized) struct LogindAbsentTests {
    func start(environment: [String: String]) throws -> DaemonFixture {
        let fixture = try DaemonFixture(extraEnvironment: environment)
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 300, sinks: """
            [[monitor]]
            kind = "logind"

            [[sink]]
            kind = "log"
            """))
        try fixture.start()
        try network.say("online", interface: "wlan0")
        return fixture
    }

    func lines(_ fixture: DaemonFixture, containing text: String) -> Int {
        fixture.daemonLog.split(separator: "\n").count { $0.contains(text) }
    }

    @Test(.requires(LogindMock.requirement)) func logindThatAppearsLaterIsFollowedAndOneLineSaidItWasMissing() async throws {
        let logind = try LogindMock(started: false)
        let fixture = try start(environment: logind.environment)
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        #expect(await Harness.waitUntil(timeout: .seconds(10), "the daemon to say logind is missing") {
            lines(fixture, containing: "logind is not on the system bus") == 1
        })

        try logind.start()
        #expect(await Harness.waitUntil(timeout: .seconds(10), "a lock from the logind that appeared (\(fixture.daemonLog))") {
            (try? logind.inhibitorCount()) == 1
        })
        try logind.prepareForSleep(true)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the lock released on sleep") {
            (try? logind.inhibitorCount()) == 0
        })

        // logind leaves and comes back: no crash, followed again.
        logind.stop()
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the daemon to see logind leave") {
            lines(fixture, containing: "logind left the system bus") == 1
        })
        try logind.start()
        #expect(await Harness.waitUntil(timeout: .seconds(10), "a lock from the logind that came back") {
            (try? logind.inhibitorCount()) == 1
        })
        #expect(lines(fixture, containing: "logind is not on the system bus") == 1)
        #expect(fixture.process?.isRunning == true)
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(LogindMock.requirement)) func noSystemBusIsOneInfoLineAndTheStateGoesOn() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-system-bus-\(UUID().uuidString.prefix(8))").path
        let fixture = try start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(missing)"])
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        // Attempts go on with a growing pause (1 s, 2 s, …): one line for all of them.
        try await Task.sleep(for: .seconds(4))
        #expect(lines(fixture, containing: "no system bus at") == 1, "\(fixture.daemonLog)")
        #expect(!fixture.daemonLog.contains("warning"), "\(fixture.daemonLog)")
        #expect(await fixture.stop() == 0)
    }
}

/// Which session the daemon follows, and signals it must not trust.
@Suite(.serialized) struct LogindSessionTests {
    func start(environment: [String: String]) throws -> DaemonFixture {
        let fixture = try DaemonFixture(extraEnvironment: environment)
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 300, sinks: """
            [[monitor]]
            kind = "logind"

            [[sink]]
            kind = "log"
            """))
        try fixture.start()
        return fixture
    }

    @Test(.requires(LogindMock.requirement)) func withoutXDGSessionIDTheUsersDisplaySessionIsFollowed() async throws {
        let logind = try LogindMock()
        try logind.makeDisplaySession()
        var environment = logind.environment
        environment["XDG_SESSION_ID"] = ""
        let fixture = try start(environment: environment)
        #expect(await Harness.waitUntil(timeout: .seconds(15), "the daemon to find the session (\(fixture.daemonLog))") {
            fixture.daemonLog.contains("session is active")
        })
        try logind.setSessionActive(false)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the daemon to see the display session inactive") {
            fixture.daemonLog.contains("session is inactive")
        })
        #expect(await fixture.stop() == 0)
    }

    /// A peer's long, multi-line error text becomes one bounded log line.
    @Test(.requires(LogindMock.requirement)) func aPeersErrorTextIsOneBoundedLogLine() async throws {
        let logind = try LogindMock()
        try logind.makeGetUserFail()
        var environment = logind.environment
        environment["XDG_SESSION_ID"] = ""
        let fixture = try start(environment: environment)
        #expect(await Harness.waitUntil(timeout: .seconds(15), "the daemon to give up on the session") {
            fixture.daemonLog.contains("no login session found")
        })
        let line = fixture.daemonLog.split(separator: "\n").first { $0.contains("no login session found") } ?? ""
        #expect(line.contains("Traceback") && line.hasSuffix("alerts do not wait for one"), "\(line)")
        #expect(line.count < 400, "\(line)")
        #expect(!fixture.daemonLog.contains("\n  File "), "\(fixture.daemonLog)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(LogindMock.requirement)) func malformedSleepSignalsAreIgnored() async throws {
        let logind = try LogindMock()
        let fixture = try start(environment: logind.environment)
        #expect(await Harness.waitUntil(timeout: .seconds(15), "an inhibitor lock") { (try? logind.inhibitorCount()) == 1 })
        try logind.emit("PrepareForSleep", signature: "s", "[<'now'>]")
        try logind.emit("PrepareForSleep", signature: "", "@av []")
        try logind.emit("PrepareForSleep", signature: "bb", "[<true>, <true>]")
        // A well-formed one after them is taken: the malformed ones were read and dropped.
        try logind.prepareForSleep(true)
        #expect(await Harness.waitUntil(timeout: .seconds(5), "the lock released on the real signal") {
            (try? logind.inhibitorCount()) == 0
        })
        #expect(fixture.daemonLog.split(separator: "\n").count { $0.contains("suspending") } == 1, "\(fixture.daemonLog)")
        #expect(fixture.process?.isRunning == true)
        #expect(await fixture.stop() == 0)
    }
}
