import Foundation
import Testing

/// `lifeline watch` fed by the daemon over D-Bus.
@Suite(.serialized)
struct WatchTests {
    /// A change of reason within a state (no transition) is a line too, as it is
    /// when `watch` reads the state file: "a line per change".
    @Test(.requires(.tools(["dbus-daemon"]))) func watchOverDBusPrintsAttributeOnlyChanges() async throws {
        let bus = try PrivateBus()
        defer { bus.kill() }
        let daemon = try DaemonFixture(extraEnvironment: bus.environment)
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "dbus"
            """))
        try daemon.start()
        func say(_ reason: String) async throws {
            try monitor.say(line: Array(#"{"state":"online","interface":"eth0","reason":"\#(reason)"}"#.utf8) + [0x0A])
        }
        try await say("first look")

        // A viewer with a runtime folder of its own: it has no state file, so
        // what it prints can only come from D-Bus.
        let viewer = try DaemonFixture(extraEnvironment: bus.environment)
        await Harness.waitUntil("daemon online on the bus") {
            (try? viewer.cli(["status", "--format", "{reason}"]))?.stdout == "first look\n"
        }
        let watch = try LineReader(viewer, ["watch"])
        defer { watch.stop() }
        await Harness.waitUntil("first line") { watch.lines.contains("online via eth0: first look") }

        try await say("second look")
        await Harness.waitUntil("the new reason") { watch.lines.contains("online via eth0: second look") }
        try await say("third look")
        await Harness.waitUntil("the next reason") { watch.lines.contains("online via eth0: third look") }
        #expect(watch.lines == ["online via eth0: first look", "online via eth0: second look", "online via eth0: third look"],
                "\(watch.lines)")
        watch.stop()
        #expect(await daemon.stop() == 0)
    }
}

/// `lifeline watch` from the state file, as a bar runs it all day: answered by
/// the small front binary, asleep while nothing changes.
@Suite(.serialized)
struct WatchFromStateFileTests {
    /// The front binary answers (it does not hand over to `lifeline-cli`), and
    /// its threads make no wake-up in five quiet seconds: no liveness polling,
    /// no timer.
    @Test func watchSleepsInTheFrontBinaryWhileNothingChanges() async throws {
        let daemon = try DaemonFixture()
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 50, sinks: ""))
        try daemon.start()
        try monitor.say("online", interface: "eth0", reason: "first look")
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: daemon.stateFilePath) }

        let watch = try LineReader(daemon, ["watch"])
        defer { watch.stop() }
        await Harness.waitUntil("first line") { watch.lines.contains("online via eth0: first look") }
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(watch.pid)/exe")
        #expect(URL(fileURLWithPath: exe).lastPathComponent == "lifeline", "watch runs \(exe)")

        let before = Self.wakeUps(watch.pid)
        try await Task.sleep(for: .seconds(5))  // the span measured, not a readiness wait
        #expect(Self.wakeUps(watch.pid) == before, "watch woke up while nothing changed")

        try monitor.say("limited", interface: "eth0", reason: "second look")
        await Harness.waitUntil("the change") { watch.lines.contains("limited via eth0: second look") }
        watch.stop()
        #expect(await daemon.stop() == 0)
    }

    /// A daemon killed without removing its file is noticed at once (a pidfd),
    /// not at the next look: the bar shows `unknown` within a second.
    @Test func watchSeesAKilledDaemonAtOnce() async throws {
        let daemon = try DaemonFixture()
        // No exec monitor: a SIGKILLed daemon would leave its child behind.
        try daemon.writeConfig("""
            [[monitor]]
            kind = "netlink"

            [[sink]]
            kind = "log"
            """)
        try daemon.start()
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: daemon.stateFilePath) }
        let watch = try LineReader(daemon, ["watch", "--format", "{state}: {reason}"])
        defer { watch.stop() }
        await Harness.waitUntil("first line") { !watch.lines.isEmpty }

        let killed = ContinuousClock.now
        await daemon.stop(signal: SIGKILL)
        await Harness.waitUntil("unknown shown") { watch.lines.last == "unknown: lifeline daemon not running" }
        #expect(ContinuousClock.now - killed < .seconds(1), "watch noticed the dead daemon late")
    }

    /// A template that shows `{duration}` is redrawn as the duration grows
    /// (each second in the first hour); without it nothing is redrawn.
    @Test func watchRedrawsADurationEachSecond() async throws {
        let daemon = try DaemonFixture()
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 50, sinks: ""))
        try daemon.start()
        try monitor.say("online", interface: "eth0")
        await Harness.waitUntil("online in the state file") {
            (try? daemon.cli(["status", "--format", "{state}"]))?.stdout == "online\n"
        }
        let watch = try LineReader(daemon, ["watch", "--format", "{state} for {duration}"])
        defer { watch.stop() }
        await Harness.waitUntil(timeout: .seconds(10), "three seconds shown") { watch.lines.count >= 3 }
        let lines = watch.lines
        #expect(lines.allSatisfy { $0.hasPrefix("online for ") }, "\(lines)")
        #expect(Set(lines).count == lines.count, "a line repeated: \(lines)")
        watch.stop()
        #expect(await daemon.stop() == 0)
    }

    /// Voluntary context switches of every thread of `pid`.
    static func wakeUps(_ pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, tid in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return sum + (line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0)
        }
    }
}
