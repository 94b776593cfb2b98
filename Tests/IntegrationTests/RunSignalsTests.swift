import Foundation
import LifelineTestKit
import Testing

/// `lifeline run` as a Unix tool: the signals the user gave it, the ones sent
/// to it, its exit status, and what counts as an outage.
@Suite struct RunSignalsTests {
    typealias Lab = JobsTests.Lab

    static func alive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    func pid(in file: String) -> Int32? {
        (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `nohup lifeline run -- CMD`: CMD ignores SIGHUP as it would under nohup alone.
    @Test(.requires(.tools(JobsTests.tools + ["nohup"]))) func aSignalIgnoredAtStartStaysIgnoredInTheCommand() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let r = try Harness.run(["nohup", Harness.binary, "run", "--", "sh", "-c", "grep ^SigIgn /proc/self/status"],
                                environment: lab.daemon.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let ignored = r.stdout.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
            .flatMap { UInt64($0.dropFirst("SigIgn:\t".count), radix: 16) }
        #expect(ignored.map { $0 & (1 << (UInt64(SIGHUP) - 1)) != 0 } == true, "SIGHUP not ignored: \(r.stdout)")
        #expect(await lab.daemon.stop() == 0)
    }

    /// Like `timeout` or `nohup`, `run` hands its command the descriptors the
    /// user opened for it, and none of its own.
    @Test(.requires(.tools(JobsTests.tools))) func theCommandGetsTheDescriptorsTheUserGaveRunAndNoneOfRuns() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let input = lab.daemon.path("input.txt")
        try "from fd 3\n".write(toFile: input, atomically: true, encoding: .utf8)
        let before = lab.daemon.path("before.txt")
        // What the shell holds just before it becomes `lifeline run` is what the command must hold.
        let r = try Harness.run(["sh", "-c", "exec 3<'\(input)'; ls /proc/$$/fd > '\(before)'; exec '\(Harness.binary)' run -- sh -c 'cat <&3; ls /proc/$$/fd'"],
                                environment: lab.daemon.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "from fd 3")
        let given = try String(contentsOfFile: before, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(given.contains("3"))
        // The shell's `ls` listed its own folder descriptor too; `sh -c` lists none of its own.
        #expect(Set(lines.dropFirst()).isSubset(of: Set(given)), "run added descriptors: \(r.stdout) vs \(given)")
        #expect(await lab.daemon.stop() == 0)
    }

    /// SIGINT or SIGQUIT sent to `run` by a process reaches the command; the
    /// command handles it (as a JVM handles SIGQUIT: it prints its threads)
    /// and exits 0, and so does `run`.
    @Test(.requires(.tools(JobsTests.tools))) func aCommandThatHandlesSIGINTOrSIGQUITAndExitsZeroGivesZero() async throws {
        for (signal, name) in [(SIGINT, "INT"), (SIGQUIT, "QUIT")] {
            let lab = try Lab()
            try await lab.start("online", reason: "up")
            let ready = lab.daemon.path("ready")
            let heard = lab.daemon.path("heard")
            let script = try lab.daemon.writeScript("handles-\(name).sh", """
                #!/bin/sh
                trap 'echo \(name) > "\(heard)"; exit 0' \(name)
                touch '\(ready)'
                while :; do sleep 0.05; done
                """)
            let run = try lab.background(["run", "--", script], name: "run.txt")
            defer { run.stop() }
            await Harness.waitUntil("the command to start") { FileManager.default.fileExists(atPath: ready) }
            #expect(run.process.signal(signal))
            #expect(await JobsTests.waitForExit(run, timeout: .seconds(5)) == 0, "SIG\(name): \(run.output)")
            #expect((try? String(contentsOfFile: heard, encoding: .utf8)) == "\(name)\n", "SIG\(name) not passed on")
            #expect(await lab.daemon.stop() == 0)
        }
    }

    /// SIGTERM and SIGHUP sent to `run` end the command, even once the session
    /// bus is gone and `run` only waits for the command.
    @Test(.requires(.tools(JobsTests.tools))) func termAndHupSentToRunReachTheCommandAfterTheBusIsLost() async throws {
        for signal in [SIGTERM, SIGHUP] {
            let lab = try Lab()
            try await lab.start("online", reason: "up")
            let pidFile = lab.daemon.path("pid")
            let run = try lab.background(["run", "--", "sh", "-c", "echo $$ > '\(pidFile)'; exec sleep 60"], name: "run.txt")
            defer { run.stop() }
            await Harness.waitUntil("the command to start") { pid(in: pidFile) != nil }
            let child = try #require(pid(in: pidFile))
            lab.bus.kill()
            // `run` sees the bus go, then waits for the command alone.
            try await Task.sleep(for: .milliseconds(500))
            #expect(run.process.signal(signal))
            #expect(await JobsTests.waitForExit(run, timeout: .seconds(5)) == 128 + signal, "\(run.output)")
            #expect(!Self.alive(child), "the command outlived signal \(signal) to run")
            kill(child, SIGKILL)
            await lab.daemon.stop(signal: SIGKILL)
        }
    }

    static let ptyLoop = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/pty_loop.py").path

    /// Ctrl-C typed on a real terminal while a script runs `lifeline run -- sleep 3`
    /// in a loop stops the script, as it stops the same loop over `sleep 3`: the
    /// shell goes on only when its child handled the signal, and a child that
    /// exits 130 looks as if it had.
    @Test(.requires(.tools(JobsTests.tools + ["bash", "python3", "sleep"])))
    func ctrlCOnATerminalStopsALoopOverRunAsItStopsALoopOverTheCommand() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        func loop(_ command: [String]) throws -> [String: Any] {
            let r = try Harness.run(["python3", Self.ptyLoop] + command, environment: lab.daemon.environment)
            return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? ["stderr": r.stderr]
        }
        let plain = try loop(["sleep", "3"])
        let wrapped = try loop([Harness.binary, "run", "--", "sleep", "3"])
        #expect(plain["signal"] as? Int == Int(SIGINT), "bash over sleep: \(plain)")
        #expect(wrapped["signal"] as? Int == plain["signal"] as? Int && wrapped["exit"] == nil,
                "bash over lifeline run: \(wrapped); over sleep: \(plain)")
        #expect((wrapped["output"] as? String)?.contains("loop-finished") == false, "\(wrapped)")
        #expect(await lab.daemon.stop() == 0)
    }

    /// SIGINT while `run` waits for the network: the command does not run, and
    /// `run` dies of SIGINT, as `sleep` would, rather than exit 130 as if it
    /// had handled it. The parent sees how it ended (`returncode` -2).
    @Test(.requires(.tools(JobsTests.tools + ["python3"]))) func sigintWhileWaitingForTheNetworkEndsRunAsItWouldEndSleep() async throws {
        let lab = try Lab()
        try await lab.start("offline", reason: "no default route")
        let marker = lab.daemon.path("ran")
        let parent = try lab.underAParent(["run", "--", "touch", marker])
        defer { parent.stop() }
        await Harness.waitUntil("the job on the board") { lab.jobs().contains(", uint64 0)") }
        let run = try #require(ChildrenLeaveWithTheDaemonTests.children(of: parent.process.pid).first)
        kill(run, SIGINT)
        #expect(await JobsTests.waitForExit(parent) == 0, "\(parent.output)")
        #expect(parent.lines.last == "-\(SIGINT)", "\(parent.output)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a cancelled job ran")
        #expect(await lab.daemon.stop() == 0)
    }

    /// `wait-online` too dies of the SIGINT that ends its wait (a script loop
    /// over it stops at Ctrl-C, as one over `sleep` does), rather than exit 130.
    @Test(.requires(.tools(JobsTests.tools + ["python3"]))) func sigintEndsWaitOnlineAsItWouldEndSleep() async throws {
        let lab = try Lab()
        try await lab.start("offline", reason: "no default route")
        let calls = try await lab.callMonitor()
        defer { calls.stop() }
        let parent = try lab.underAParent(["wait-online", "--timeout", "60s"])
        defer { parent.stop() }
        // It asks for the state once it has subscribed: from then on it waits.
        await Harness.waitUntil("wait-online to ask for the state") { calls.output.contains("member=GetStatus") }
        let waiter = try #require(ChildrenLeaveWithTheDaemonTests.children(of: parent.process.pid).first)
        kill(waiter, SIGINT)
        #expect(await JobsTests.waitForExit(parent) == 0, "\(parent.output)")
        #expect(parent.lines.last == "-\(SIGINT)", "\(parent.output)")
        #expect(await lab.daemon.stop() == 0)
    }

    /// A restarted daemon says `unknown` until it has looked: not an outage, so
    /// a command that failed for its own reasons meanwhile is not run again.
    @Test(.requires(.tools(JobsTests.tools))) func aDaemonRestartedWhileAFailingCommandRunsCausesNoRerun() async throws {
        let lab = try Lab()
        try await lab.start("online", reason: "up")
        let runs = lab.daemon.path("runs.txt")
        let go = lab.daemon.path("go")
        let script = try lab.daemon.writeScript("fails.sh", """
            #!/bin/sh
            echo run >> '\(runs)'
            while [ ! -e '\(go)' ]; do sleep 0.01; done
            exit 1
            """)
        let run = try lab.background(["run", "--retries", "3", "--", script], name: "run.txt")
        defer { run.stop() }
        func count() -> Int { ((try? String(contentsOfFile: runs, encoding: .utf8)) ?? "").split(separator: "\n").count }
        await Harness.waitUntil("the first run") { count() == 1 }
        // `run` asks the new daemon for its state once it sees it come back: that call is the barrier.
        let calls = try await lab.callMonitor()
        defer { calls.stop() }
        #expect(await lab.daemon.stop() == 0)
        try? FileManager.default.removeItem(atPath: lab.daemon.stateFilePath)
        try lab.daemon.start()
        await Harness.waitUntil("the daemon back, online") { lab.stateFile.contains(#""state":"online""#) }
        await Harness.waitUntil("`run` to hear it come back") { calls.output.contains("member=GetStatus") }
        FileManager.default.createFile(atPath: go, contents: nil)
        #expect(await JobsTests.waitForExit(run) == 1, "\(run.output)")
        #expect(count() == 1, "ran again after a daemon restart: \(run.output)")
        #expect(await lab.daemon.stop() == 0)
    }
}

/// The daemon's children go with it, however it ends.
@Suite struct ChildrenLeaveWithTheDaemonTests {
    /// SIGKILL to the daemon: its exec monitor's program is gone within a second.
    @Test(.requires(.tools(["tail"]))) func theExecMonitorsProgramDiesWithAKilledDaemon() async throws {
        let daemon = try DaemonFixture()
        let network = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(network.config(debounceMs: 0, sinks: ""))
        try network.say("online", interface: "eth0", reason: "up")
        try daemon.start()
        await Harness.waitUntil("the daemon to publish online") {
            ((try? String(contentsOfFile: daemon.stateFilePath, encoding: .utf8)) ?? "").contains(#""state":"online""#)
        }
        let daemonPID = try #require(daemon.process?.pid)
        let tails = Self.children(of: daemonPID).filter { Self.command($0).hasPrefix("tail") }
        try #require(tails.count == 1, "children: \(Self.children(of: daemonPID).map(Self.command))")
        await daemon.stop(signal: SIGKILL)
        let clock = ContinuousClock()
        let killed = clock.now
        await Harness.waitUntil("the monitor's program to end") { !RunSignalsTests.alive(tails[0]) }
        #expect(!RunSignalsTests.alive(tails[0]), "tail \(tails[0]) still runs \(clock.now - killed) after the daemon was killed")
        kill(tails[0], SIGKILL)
    }

    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[1]) == pid
        }
    }

    static func command(_ pid: Int32) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }
}
