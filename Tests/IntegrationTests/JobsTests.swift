import Foundation
import LifelineTestKit
import Testing

/// `lifeline wait-online` and `lifeline run` against a real daemon on a private
/// bus, its state driven by a scripted monitor, and the jobs as D-Bus shows them.
@Suite struct JobsTests {
    static let tools = ["dbus-daemon", "gdbus", "dbus-monitor", "sh", "tail"]

    /// A private bus and a daemon whose state the test sets (no debounce).
    final class Lab: @unchecked Sendable {
        let bus: PrivateBus
        let daemon: DaemonFixture
        let network: ScriptedNetwork

        init() throws {
            bus = try PrivateBus()
            daemon = try DaemonFixture(extraEnvironment: bus.environment)
            network = ScriptedNetwork(fixture: daemon)
            try daemon.writeConfig(network.config(debounceMs: 0, sinks: """
                [[sink]]
                kind = "dbus"

                [[sink]]
                kind = "log"
                """))
        }

        /// Starts the daemon in `state` and waits until D-Bus serves it.
        func start(_ state: String, reason: String = "") async throws {
            try network.say(state, interface: "eth0", reason: reason)
            try daemon.start()
            await Harness.waitUntil("the daemon to serve \(state) on D-Bus") {
                daemon.daemonLog.contains("serving org.lifeline.Lifeline1") && stateFile.contains(#""state":"\#(state)""#)
            }
        }

        var stateFile: String { (try? String(contentsOfFile: daemon.stateFilePath, encoding: .utf8)) ?? "" }

        func set(_ state: String, reason: String = "") async throws {
            try network.say(state, interface: "eth0", reason: reason)
            await Harness.waitUntil("the daemon to publish \(state)") { stateFile.contains(#""state":"\#(state)""#) }
        }

        func gdbus(_ method: String, _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
            try Harness.run(["gdbus", "call", "--session", "--dest", "org.lifeline.Lifeline1", "--object-path",
                             "/org/lifeline/Lifeline1", "--method", "org.lifeline.Lifeline1.\(method)"] + arguments,
                            environment: daemon.environment)
        }

        /// The `Jobs` property as gdbus prints it: `(<[('1', 'sh -c …', uint64 0)]>,)` (0: waiting, 2: retrying).
        func jobs() -> String {
            (try? Harness.run(["gdbus", "call", "--session", "--dest", "org.lifeline.Lifeline1", "--object-path",
                               "/org/lifeline/Lifeline1", "--method", "org.freedesktop.DBus.Properties.Get",
                               "org.lifeline.Lifeline1", "Jobs"], environment: daemon.environment).stdout) ?? ""
        }

        /// `lifeline ARGS` in the background, its output in a file.
        func background(_ arguments: [String], name: String) throws -> BackgroundProcess {
            try BackgroundProcess([Harness.binary] + arguments, environment: daemon.environment,
                                  output: daemon.root.appendingPathComponent(name))
        }

        /// Watches method calls to the daemon, to know when a client has subscribed
        /// (it asks `GetStatus` only after its match rules are in place); returns
        /// once the monitor listens.
        func callMonitor() async throws -> BackgroundProcess {
            let monitor = try BackgroundProcess(["dbus-monitor", "--session", "type='method_call',interface='org.lifeline.Lifeline1'"],
                                                environment: daemon.environment,
                                                output: daemon.root.appendingPathComponent("calls.txt"))
            await Harness.waitUntil("dbus-monitor to listen") { monitor.output.contains("member=") || monitor.output.contains("NameAcquired") }
            return monitor
        }

        /// `lifeline ARGS` as the child of a Python parent that prints how it
        /// ended (`returncode`: the exit status, or minus the signal it died of).
        func underAParent(_ arguments: [String]) throws -> BackgroundProcess {
            try BackgroundProcess(["python3", "-c", "import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)",
                                   Harness.binary] + arguments,
                                  environment: daemon.environment, output: daemon.root.appendingPathComponent("parent.txt"))
        }
    }

    static func waitForExit(_ p: BackgroundProcess, timeout: Duration = .seconds(10)) async -> Int32? {
        await Harness.waitUntil(timeout: timeout, "the command to end") { !p.process.isRunning }
        return p.process.exitStatus
    }

    // MARK: wait-online

    @Test(.requires(.tools(JobsTests.tools))) func waitOnlineReturnsWithinATenthOfASecondOfOnline() async throws {
        let lab = try Lab()
        try await lab.start("offline", reason: "no default route")
        let calls = try await lab.callMonitor()
        defer { calls.stop() }
        let waiter = try lab.background(["wait-online", "--timeout", "30s"], name: "wait.txt")
        defer { waiter.stop() }
        await Harness.waitUntil("wait-online to ask for the state") { calls.output.contains("member=GetStatus") }
        #expect(waiter.process.isRunning, "wait-online returned while offline: \(waiter.output)")

        try lab.network.say("online", interface: "eth0", reason: "back")
        // Both sides polled every millisecond: when the state file shows online, and when wait-online ends.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        var onlineAt: ContinuousClock.Instant?
        var exitedAt: ContinuousClock.Instant?
        while clock.now < deadline, onlineAt == nil || exitedAt == nil {
            if onlineAt == nil, lab.stateFile.contains(#""state":"online""#) { onlineAt = clock.now }
            if exitedAt == nil, !waiter.process.isRunning { exitedAt = clock.now }
            try await Task.sleep(for: .milliseconds(1))
        }
        let online = try #require(onlineAt)
        let exited = try #require(exitedAt)
        #expect(waiter.process.exitStatus == 0, "\(waiter.output)")
        #expect(online.duration(to: exited) <= .milliseconds(100), "wait-online ended \(online.duration(to: exited)) after online")
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(JobsTests.tools))) func waitOnlineTimesOutWithTheStateAndItsReason() async throws {
        let lab = try Lab()
        try await lab.start("limited", reason: "probe to http://check.test/ timed out after 5s")
        let started = ContinuousClock.now
        let r = try lab.daemon.cli(["wait-online", "--timeout", "500ms"])
        let took = ContinuousClock.now - started
        #expect(r.status == 1)
        #expect(r.stderr == "lifeline: still limited after 500ms: probe to http://check.test/ timed out after 5s\n", "\(r.stderr)")
        #expect(took >= .milliseconds(500) && took < .seconds(5), "\(took)")
        #expect(await lab.daemon.stop() == 0)
    }

    @Test func waitOnlineRefusesABadDuration() throws {
        let fixture = try DaemonFixture()
        let r = try fixture.cli(["wait-online", "--timeout", "5 parsecs"])
        #expect(r.status != 0 && r.status != 1)
        #expect(r.stderr.contains("'5 parsecs' is not a duration"), "\(r.stderr)")
    }

    /// Without a daemon: one route dump and one HTTP check, inside the probe lab's namespace.
    @Test(.requires(ProbeTests.requirement)) func waitOnlineWithoutADaemonLooksOnceItself() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: direct)
        try fixture.writeConfig(ProbeTests.config(url: lab.checkURL, timeout: "1s"))
        let inLab = ["ip", "netns", "exec", lab.namespace, Harness.binary, "wait-online", "--timeout", "5s"]

        let up = try Harness.run(inLab, environment: fixture.environment)
        #expect(up.status == 0, "\(up.stderr)")
        #expect(lab.requests(.ok).count == 1, "one HTTP check: \(lab.requests(.ok))")

        // `run` looks the same way, runs once, and says it will not retry.
        let runOnce = try Harness.run(["ip", "netns", "exec", lab.namespace, Harness.binary, "run", "--", "sh", "-c", "exit 5"],
                                      environment: fixture.environment)
        #expect(runOnce.status == 5, "\(runOnce.stderr)")
        #expect(runOnce.stderr.contains("online after one look; running once, no retries"), "\(runOnce.stderr)")

        lab.stopServers()
        let down = try Harness.run(inLab, environment: fixture.environment)
        #expect(down.status == 1)
        #expect(down.stderr.contains("no daemon runs; looked once: limited: TCP connect to \(lab.hostAddress):8080 was refused"),
                "\(down.stderr)")

        try Harness.run(["ip", "-n", lab.namespace, "route", "del", "default"])
        let offline = try Harness.run(inLab, environment: fixture.environment)
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("looked once: offline"), "\(offline.stderr)")
    }

    // MARK: run

    @Test(.requires(.tools(JobsTests.tools))) func runRunsAgainOnceTheLostConnectionIsBackAndExitsZero() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let runs = lab.daemon.path("runs.txt")
        let go = lab.daemon.path("go")
        // The first run waits for the test's "go", then fails; the second succeeds.
        let script = try lab.daemon.writeScript("push.sh", """
            #!/bin/sh
            echo run >> '\(runs)'
            if [ "$(wc -l < '\(runs)')" -eq 1 ]; then
              while [ ! -e '\(go)' ]; do sleep 0.01; done
              exit 7
            fi
            exit 0
            """)
        let run = try lab.background(["run", "--retries", "3", "--", script], name: "run.txt")
        defer { run.stop() }
        func count() -> Int { ((try? String(contentsOfFile: runs, encoding: .utf8)) ?? "").split(separator: "\n").count }
        await Harness.waitUntil("the first run") { count() == 1 }

        try await lab.set("offline", reason: "cable out")
        FileManager.default.createFile(atPath: go, contents: nil)
        await Harness.waitUntil("the job to wait for the network again") { lab.jobs().contains(", uint64 2)") }
        #expect(count() == 1, "ran again while offline")

        try await lab.set("online", reason: "cable in")
        #expect(await Self.waitForExit(run) == 0, "\(run.output)")
        #expect(count() == 2)
        #expect(run.output.contains("failed (exit 7) while the connection was lost"), "\(run.output)")
        await Harness.waitUntil("the job to leave the board") { lab.jobs().contains("<@a(sst) []>") }
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(JobsTests.tools))) func runDoesNotRetryAFailureWhileOnline() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let r = try lab.daemon.cli(["run", "--", "sh", "-c", "exit 3"])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(await lab.daemon.stop() == 0)
    }

    /// The command starts with no signal blocked or ignored: `lifeline` talks
    /// D-Bus, and libdbus ignores SIGPIPE in its process; a command inheriting
    /// that would complain in every pipeline that ends early.
    @Test(.requires(.tools(JobsTests.tools + ["yes", "head"]))) func runStartsTheCommandWithDefaultSignals() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let r = try lab.daemon.cli(["run", "--", "sh", "-c", "yes | head -n 1; grep -E '^Sig(Blk|Ign)' /proc/self/status"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "y")
        #expect(lines.contains("SigBlk:\t0000000000000000"), "\(r.stdout)")
        let ignored = lines.first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.dropFirst("SigIgn:\t".count), radix: 16) }
        #expect(ignored.map { $0 & (1 << (UInt64(SIGPIPE) - 1)) == 0 } == true, "SIGPIPE ignored: \(r.stdout)")
        #expect(!r.stderr.contains("Broken pipe"), "\(r.stderr)")
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(JobsTests.tools))) func cancelJobsEndsAWaitingRunWith130() async throws {
        let lab = try Lab()
        try await lab.start("offline", reason: "no default route")
        let marker = lab.daemon.path("ran")
        let run = try lab.background(["run", "--", "touch", marker], name: "run.txt")
        defer { run.stop() }
        await Harness.waitUntil("the job on the board") { lab.jobs().contains(", uint64 0)") }
        #expect(lab.jobs().contains("'touch \(marker)'"), "\(lab.jobs())")

        #expect(try lab.gdbus("CancelJobs").status == 0)
        #expect(await Self.waitForExit(run) == 130, "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a cancelled job ran")
        await Harness.waitUntil("the board to be empty") { lab.jobs().contains("<@a(sst) []>") }
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(JobsTests.tools))) func retryJobsRunsAWaitingJobAtOnce() async throws {
        let lab = try Lab()
        try await lab.start("limited", reason: "probe timed out")
        let marker = lab.daemon.path("ran")
        let run = try lab.background(["run", "--", "touch", marker], name: "run.txt")
        defer { run.stop() }
        await Harness.waitUntil("the job on the board") { lab.jobs().contains(", uint64 0)") }
        #expect(try lab.gdbus("RetryJobs").status == 0)
        #expect(await Self.waitForExit(run) == 0, "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(JobsTests.tools))) func aJobGoesWhenItsOwnerIsKilledAndOthersCannotTouchIt() async throws {
        let lab = try Lab()
        try await lab.start("offline", reason: "no default route")
        let run = try lab.background(["run", "--", "true"], name: "run.txt")
        await Harness.waitUntil("the job on the board") { lab.jobs().contains(", uint64 0)") }
        let id = try #require(lab.jobs().firstMatch(of: /\('([0-9]+)'/)?.1)

        // gdbus is another connection: not the owner.
        let foreign = try lab.gdbus("SetJobState", [String(id), "running"])
        #expect(foreign.status != 0)
        #expect(foreign.stderr.contains("AccessDenied") && foreign.stderr.contains("belongs to another connection"), "\(foreign.stderr)")
        let badState = try lab.gdbus("SetJobState", [String(id), "sleeping"])
        #expect(badState.stderr.contains("InvalidArgs"), "\(badState.stderr)")
        let unknown = try lab.gdbus("RemoveJob", ["no-such-job"])
        #expect(unknown.stderr.contains("no job 'no-such-job'"), "\(unknown.stderr)")

        run.process.kill()
        await Harness.waitUntil("the killed run's job to go") { lab.jobs().contains("<@a(sst) []>") }
        #expect(await lab.daemon.stop() == 0)
    }
}

/// The outage toast counts waiting commands, and its Retry runs them at once:
/// dunst under Xvfb, with a rule that makes `dunstctl action` invoke Retry.
@Suite(.serialized) struct JobsToastTests {
    /// dunst with one rule: on a toast that lists waiting commands, the action
    /// `dunstctl action` invokes is Retry (by default it is the click, "Check now").
    final class RetryingDunst: @unchecked Sendable {
        let process: Spawned

        init(_ desktop: Desktop, folder: String) async throws {
            let rc = folder + "/dunstrc"
            try """
                [jobs]
                    body = "*waiting for the network*"
                    action_name = "jobs-retry"
                """.write(toFile: rc, atomically: true, encoding: .utf8)
            await Harness.waitUntil("Xvfb on \(desktop.display)") {
                (try? Harness.run(["xwininfo", "-root", "-display", desktop.display]).status) == 0
            }
            process = try Spawned(["dunst", "-config", rc], environment: desktop.environment)
            await Harness.waitUntil("dunst on the bus") { (try? desktop.dunstctl(["is-paused"]).status) == 0 }
        }

        deinit { process.kill() }
    }

    @Test(.requires(.tools(Desktop.tools + ["gdbus"]))) func theToastCountsWaitingCommandsAndItsRetryRunsThemAtOnce() async throws {
        let desktop = try Desktop()
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment)
        let dunst = try await RetryingDunst(desktop, folder: fixture.root.path)
        defer { withExtendedLifetime(dunst) {} }
        let net = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(net.config(debounceMs: 0, sinks: """
            [[sink]]
            kind = "libnotify"

            [[sink]]
            kind = "dbus"

            [[sink]]
            kind = "log"
            """))
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        defer { monitor.stop() }
        await Desktop.waitUntilMonitoring(monitor)
        try net.say("online", interface: "eth0")
        try fixture.start()
        await fixture.waitForLogged(["online"])
        try net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("the outage toast") { desktop.displayedCount() == 1 }

        let marker = fixture.path("ran")
        let run = try BackgroundProcess([Harness.binary, "run", "--", "touch", marker], environment: fixture.environment,
                                        output: fixture.root.appendingPathComponent("run.txt"))
        defer { run.stop() }
        await Harness.waitUntil("the toast to count the command") {
            NotificationCalls(monitor.output).notifies.last?.body.contains("1 command waiting for the network.") == true
        }
        let toast = try #require(NotificationCalls(monitor.output).notifies.last)
        #expect(toast.summary == "Offline")
        #expect(toast.actionLabels.contains("Retry") && toast.actionLabels.contains("Cancel"), "\(toast.actions)")
        #expect(toast.replacesID != 0, "the count is an update of the outage toast, in place")
        #expect(!FileManager.default.fileExists(atPath: marker))

        #expect(try desktop.dunstctl(["action", "0"]).status == 0)
        #expect(await JobsTests.waitForExit(run) == 0, "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(fixture.loggedStates().last == "offline", "Retry ran it while still offline")
        #expect(await fixture.stop() == 0)
    }
}
