import Foundation
import InMemoryLogging
import LifelineCore
import LifelinePlatform
import LifelineTestKit
import Logging
import Testing
@testable import ExecSink

/// The exec sink with real hook scripts in a temporary folder: what each hook
/// received is read back from the files it writes.
@Suite struct ExecSinkTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("execsink-\(UUID().uuidString.prefix(8))").path
    var hooks: String { dir + "/hooks.d" }
    let log = InMemoryLogHandler()

    init() throws {
        try FileManager.default.createDirectory(atPath: dir + "/hooks.d", withIntermediateDirectories: true)
    }

    func hook(_ name: String, _ body: String, mode: mode_t = 0o700) throws {
        let path = hooks + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
    }

    /// A running sink fed through its own mailbox.
    struct Running {
        let mailbox: Mailbox
        let task: Task<Void, any Error>

        func post(_ update: Update) { mailbox.post(update) }

        func stop() async throws {
            mailbox.close()
            try await task.value
        }
    }

    func start(timeout: ConfigDuration = .seconds(10)) throws -> Running {
        var config = ExecSink.Config()
        config.folders = [hooks]
        config.timeout = timeout
        let logger = Logger(label: "test") { [log] _ in log }
        let context = PluginContext(name: "sink exec", logger: logger,
                                    paths: Paths(configHome: dir, stateHome: dir, runtimeDir: dir),
                                    control: Bus(clock: ContinuousClock()))
        let sink = try ExecSink(config: config, context: context)
        let mailbox = Mailbox(policy: ExecSink.delivery)
        return Running(mailbox: mailbox, task: Task { try await sink.run(updates: SinkUpdates(mailbox)) })
    }

    func transition(_ state: ConnectivityState, _ sequence: UInt64, previous: ConnectivityState = .online) -> Update {
        Update(event: StateEvent(state: state, previous: previous, since: 1_700_000_000_000_000 + Int64(sequence),
                                 interface: "wlan0", kind: .wifi, reason: "reason \(sequence)", rttMs: 12.5,
                                 metered: true, sequence: sequence),
               isTransition: true)
    }

    func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func logged(_ text: String) -> Bool { log.entries.contains { $0.message.description.contains(text) } }

    /// Alive and not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    @Test func eachTransitionRunsEveryHookWithTheEventInItsEnvironmentArgumentsAndStandardInput() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let record = """
            n=$(basename "$0")
            echo "$$" > "\(dir)/$n.pid.$LIFELINE_SEQUENCE"
            env | grep '^LIFELINE_' | sort > "\(dir)/$n.env.$LIFELINE_SEQUENCE"
            cat > "\(dir)/$n.stdin.$LIFELINE_SEQUENCE"
            printf '%s\\n' "$@" > "\(dir)/$n.args.$LIFELINE_SEQUENCE"
            """
        for name in ["20-b", "10-a", "30-c.offline"] { try hook(name, record) }
        let sink = try start()
        sink.post(Update(event: .initial(at: 1), isTransition: false))
        sink.post(transition(.offline, 1))
        #expect(await eventually { ["10-a", "20-b", "30-c.offline"].allSatisfy { !lines("\($0).args.1").isEmpty } })
        // Started in name order: each one's process came after the one before it.
        let pids = ["10-a", "20-b", "30-c.offline"].map { Int(lines("\($0).pid.1").first ?? "") ?? 0 }
        #expect(pids == pids.sorted() && pids[0] > 0, "start order \(pids)")
        #expect(lines("20-b.env.1") == [
            "LIFELINE_INTERFACE=wlan0", "LIFELINE_KIND=wifi", "LIFELINE_METERED=true", "LIFELINE_PREVIOUS=online",
            "LIFELINE_REASON=reason 1", "LIFELINE_RTT_MS=12.5", "LIFELINE_SEQUENCE=1", "LIFELINE_SINCE=1700000000000001",
            "LIFELINE_STATE=offline",
        ])
        #expect(lines("20-b.args.1") == ["offline", "wlan0"])
        #expect(lines("20-b.stdin.1") == [
            #"{"state":"offline","previous":"online","since":1700000000000001,"interface":"wlan0","kind":"wifi","reason":"reason 1","rtt_ms":12.5,"metered":true,"sequence":1,"connection":"","diagnosis":"","families":{}}"#,
        ])

        // A hook dropped in runs on the next transition, without a restart; the
        // one named for `offline` does not run on `online`.
        try hook("15-new", record)
        sink.post(transition(.online, 2, previous: .offline))
        #expect(await eventually { ["10-a", "15-new", "20-b"].allSatisfy { !lines("\($0).args.2").isEmpty } })
        #expect(lines("15-new.args.2") == ["online", "wlan0"])
        try await sink.stop()
        #expect(lines("30-c.offline.args.2").isEmpty)
        // An attribute-only update and the start-up state ran nothing.
        let runs = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".args.") }
        #expect(runs.count == 6)
    }

    @Test func aSlowHookHoldsNoOtherHookAndRunsAgainOnlyForTheNewestState() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-slow", "echo $LIFELINE_SEQUENCE >> \(dir)/slow; while [ ! -e \(dir)/go ]; do sleep 0.01; done")
        try hook("20-fast", "echo $LIFELINE_SEQUENCE >> \(dir)/fast")
        let sink = try start()
        sink.post(transition(.offline, 1))
        #expect(await eventually { lines("slow") == ["1"] && lines("fast") == ["1"] })
        // While the slow hook runs, three more transitions: the fast one runs on each at once.
        for n: UInt64 in 2...4 {
            sink.post(transition(n % 2 == 0 ? .online : .offline, n))
            #expect(await eventually { lines("fast").last == "\(n)" }, "fast hook on transition \(n)")
        }
        #expect(lines("slow") == ["1"])
        _ = FileManager.default.createFile(atPath: dir + "/go", contents: nil)
        // Only the newest state waited for the slow hook.
        #expect(await eventually { lines("slow") == ["1", "4"] })
        try await sink.stop()
        #expect(lines("slow") == ["1", "4"])
        #expect(lines("fast") == ["1", "2", "3", "4"])
    }

    @Test func aHookPastItsTimeoutIsStoppedWithEverythingItStarted() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-sleeper", "sleep 60 & echo $! > \(dir)/child; echo $$ > \(dir)/pid; wait")
        // Ignores SIGTERM (and so does its child): SIGKILL follows.
        try hook("20-stubborn", "trap '' TERM; sleep 60 & echo $! > \(dir)/stubborn-child; echo $$ > \(dir)/stubborn; wait; wait")
        // Long enough that the shell has run its first line (the trap) before the
        // SIGTERM comes, however busy the machine: the test is about what follows.
        let sink = try start(timeout: .seconds(3))
        sink.post(transition(.offline, 1))
        let files = ["pid", "child", "stubborn", "stubborn-child"]
        #expect(await eventually(timeout: .seconds(20)) { files.allSatisfy { Int32(lines($0).first ?? "") != nil } })
        let pids = files.compactMap { Int32(lines($0).first ?? "") }
        try #require(pids.count == 4)
        #expect(await eventually(timeout: .seconds(20)) { !Self.isAlive(pids[0]) && !Self.isAlive(pids[1]) })
        #expect(await eventually { logged("hook \(hooks)/10-sleeper stopped after") && logged("(timeout 3s) with SIGTERM") })
        // The stubborn one outlived its SIGTERM: it ended by the SIGKILL that
        // follows 2 s later (its log line says which signal did it), with its child.
        #expect(await eventually(timeout: .seconds(20)) { !Self.isAlive(pids[2]) && !Self.isAlive(pids[3]) })
        #expect(await eventually { logged("hook \(hooks)/20-stubborn stopped after") && logged("with SIGKILL") })
        try await sink.stop()
    }

    @Test func theSinkEndsItsRunningHooksWhenItStops() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-sleeper", "echo $$ > \(dir)/pid; exec sleep 60")
        let sink = try start()
        sink.post(transition(.offline, 1))
        #expect(await eventually { lines("pid").count == 1 })
        let pid = try #require(Int32(lines("pid")[0]))
        let clock = ContinuousClock()
        let began = clock.now
        try await sink.stop()
        #expect(clock.now - began < .seconds(1))
        #expect(!Self.isAlive(pid))
        #expect(logged("hook \(hooks)/10-sleeper stopped with SIGTERM as the exec sink ends"))
    }

    @Test func aHookGetsTheDaemonsEnvironmentButNotWhatSystemdMeantForTheDaemonAlone() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-env", "env > \(dir)/env")
        setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1)
        setenv("LIFELINE_STATE", "stale", 1)
        setenv("LIFELINE_TEST_KEEP", "kept", 1)
        let sink = try start()
        unsetenv("NOTIFY_SOCKET")
        unsetenv("LIFELINE_STATE")
        unsetenv("LIFELINE_TEST_KEEP")
        sink.post(transition(.limited, 1))
        #expect(await eventually { lines("env").contains { $0.hasPrefix("PATH=") } })
        try await sink.stop()
        let env = lines("env")
        #expect(env.filter { $0.hasPrefix("LIFELINE_STATE=") } == ["LIFELINE_STATE=limited"])
        #expect(!env.contains { $0.hasPrefix("NOTIFY_SOCKET=") })
        // Every inherited LIFELINE_ variable goes, not only the event's own: a hook reads only this event.
        #expect(!env.contains { $0.hasPrefix("LIFELINE_TEST_KEEP=") })
    }

    @Test func aRefusedHookIsNamedInTheLogAndTheOthersRun() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-open", "touch \(dir)/open-ran", mode: 0o777)
        try hook("20-good", "echo out; echo err >&2; exit 3")
        let sink = try start()
        sink.post(transition(.offline, 1))
        #expect(await eventually { logged("hook \(hooks)/20-good exited with status 3") })
        #expect(logged("hook \(hooks)/10-open refused: writable by others (mode 777)"))
        #expect(logged("hook \(hooks)/20-good: out") && logged("hook \(hooks)/20-good: err"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/open-ran"))
        try await sink.stop()
    }

    /// Whoever can write to the hooks folder could put any program there:
    /// such a folder is refused, and the log names it.
    @Test func aHooksFolderWritableByOthersIsRefusedAndNamed() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-ran", "touch \(dir)/ran")
        chmod(hooks, 0o777)
        let sink = try start()
        sink.post(transition(.offline, 1))
        #expect(await eventually { logged("hook \(hooks)/10-ran refused: the folder \(hooks) (owner uid \(getuid())) is writable by others (mode 777)") })
        try await sink.stop()
        #expect(!FileManager.default.fileExists(atPath: dir + "/ran"))
    }

    /// A hook sees nothing of the daemon's: no descriptor above 2, in the
    /// script (its interpreter reads it through the daemon's descriptor) nor in
    /// what it runs.
    @Test func aHookSeesNoDescriptorAboveTwo() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A descriptor the daemon holds without close-on-exec, as one inherited
        // from whatever started it would be.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        try #require(leaked > 2)
        try hook("10-fds", "ls /proc/$$/fd > \(dir)/script-fds; ls /proc/self/fd > \(dir)/child-fds")
        let sink = try start()
        sink.post(transition(.offline, 1))
        #expect(await eventually { !lines("child-fds").isEmpty })
        try await sink.stop()
        // The script's shell may keep its own copy of the script open, close-on-exec,
        // at a number of its choosing (dash: 10); nothing else.
        let script = lines("script-fds").compactMap { Int32($0) }.filter { $0 > 2 }
        #expect(script.allSatisfy { $0 >= 10 }, "the hook's shell holds \(lines("script-fds"))")
        // `ls` itself holds one, for the folder it lists.
        #expect(lines("child-fds").compactMap { Int32($0) }.filter { $0 > 2 }.count <= 1, "\(lines("child-fds"))")
    }

    /// The file that was checked is the file that runs: one swapped in after
    /// the check (a rename over it) is not run.
    @Test func aHookSwappedAfterItsCheckIsNotRun() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try hook("10-swap", "echo checked; stat -L -c %i \"$0\"")
        let path = hooks + "/10-swap"
        guard case .success(let opened) = HookCheck.open(path) else {
            Issue.record("the hook was refused")
            return
        }
        // Swapped between the check and the run.
        let other = hooks + "/.other"
        try ("#!/bin/sh\necho swapped\n").write(toFile: other, atomically: false, encoding: .utf8)
        chmod(other, 0o700)
        #expect(rename(other, path) == 0)
        var swapped = stat()
        stat(path, &swapped)
        #expect(swapped.st_ino != opened.inode)

        // The script reports the inode of the file its interpreter reads.
        let process = try HookProcess(path: path, hook: opened, arguments: ["offline", "wlan0"], environment: ["PATH=/usr/bin:/bin"], input: [])
        var output: [String] = []
        let (outcome, _) = process.wait(timeout: .seconds(10), stopRequested: { false }) { output.append($0) }
        #expect(outcome == .exited(0))
        #expect(output == ["checked", "\(opened.inode)"], "ran \(output)")
    }

    /// A hook's child that ignores SIGTERM is killed with the rest of the
    /// hook's group when the grace is over, even though the hook itself ended
    /// at the SIGTERM: no process of the hook remains.
    @Test func aTermIgnoringGrandchildIsGoneAfterTheGrace() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let marker = "hooktest-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try hook("10-leave", "(trap '' TERM; exec sleep 600) & echo $! > \(dir)/child; sleep 600")
        setenv("HOOKTEST_MARK", marker, 1)
        let sink = try start(timeout: .milliseconds(300))
        unsetenv("HOOKTEST_MARK")
        sink.post(transition(.offline, 1))
        #expect(await eventually { Int32(lines("child").first ?? "") != nil })
        // Within the grace (SIGTERM at 0.3 s, SIGKILL 2 s later) the child is still there; after it, nothing is.
        try await Task.sleep(for: .seconds(1))
        #expect(!Self.processes(carrying: marker).isEmpty, "the child should outlive the SIGTERM")
        #expect(await eventually(timeout: .seconds(5)) { Self.processes(carrying: marker).isEmpty },
                "left running: \(Self.processes(carrying: marker))")
        #expect(await eventually { logged("hook \(hooks)/10-leave stopped after") && logged("with SIGKILL") })
        for pid in Self.processes(carrying: marker) { kill(pid, SIGKILL) }
        try await sink.stop()
    }

    /// Live processes whose environment holds `HOOKTEST_MARK=marker`.
    static func processes(carrying marker: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return data.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "HOOKTEST_MARK=\(marker)" }
        }
    }
}
