import Foundation
import LifelineTestKit
import Testing

/// While nothing changes, nothing wakes the daemon: no thread of it runs
/// (counted with the kernel's voluntary context switches of every thread,
/// /proc/PID/task/TID/status), and none of libdispatch's worker pool exists,
/// whose monitor would wake it once a second.
///
/// The daemon follows the kernel (netlink) in a network namespace of its own
/// and is on a private session bus, so every thread has its work and nothing
/// to retry: what wakes it then is the daemon's own doing.
@Suite(.serialized) struct QuietDaemonTests {
    @Test(.requires(.rootAnd(["ip", "dbus-daemon"]))) func anIdleDaemonDoesNotWake() async throws {
        let net = try NetnsPair()
        let bus = try PrivateBus()
        let f = try DaemonFixture(extraEnvironment: bus.environment)
        try f.writeConfig("""
            [[monitor]]
            kind = "netlink"

            [[sink]]
            kind = "log"
            """)
        f.commandPrefix = ["ip", "netns", "exec", net.client]
        try f.start()
        defer { f.stopNow() }
        await f.waitForLogged(["online"])
        let pid = try #require(f.process?.pid)

        // Start-up settles (threads finish their first work and sleep); then a
        // window of 3 s in which no thread wakes.
        let (quiet, last) = try await Self.quietWindow(pid: pid)
        #expect(quiet, "no 3 s without a wake-up in 20 s; the last window: \(last)")
        let pool = ThreadSwitches(pid: pid).byName.keys.filter { $0.hasSuffix("-qos") }
        #expect(pool.isEmpty, "libdispatch's worker pool runs: \(pool)")
    }

    /// Without a system bus (a desktop without NetworkManager, a container),
    /// the monitors that follow it wait for its socket to be created, and
    /// nothing wakes the daemon meanwhile; once the bus is there it is followed
    /// at once.
    @Test(.requires(.rootAnd(["ip", "dbus-daemon"]), NetworkManagerMock.requirement)) func waitingForTheSystemBusWakesNothing() async throws {
        let net = try NetnsPair()
        let bus = try PrivateBus()
        // A folder that does not exist yet either: its parent is watched until it
        // does. A parent of the test's own, which nothing else touches (in /tmp
        // itself, any file another program made there woke the watch).
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-sysbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("bus")
        let socket = folder.appendingPathComponent("system_bus_socket").path
        let f = try DaemonFixture(extraEnvironment: bus.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)"]) { $1 })
        try f.writeConfig("""
            [[monitor]]
            kind = "netlink"

            [[monitor]]
            kind = "networkmanager"

            [[monitor]]
            kind = "logind"

            [[sink]]
            kind = "log"
            """)
        f.commandPrefix = ["ip", "netns", "exec", net.client]
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("both monitors to find no system bus") {
            f.logLines(containing: "no system bus").count == 2 && f.loggedStates() == ["online"]
        }
        let pid = try #require(f.process?.pid)
        let (quiet, last) = try await Self.quietWindow(pid: pid)
        #expect(quiet, "no 3 s without a wake-up in 20 s; the last window: \(last)")

        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let nm = try await NetworkManagerMock(socket: socket)
        try await nm.start()
        await Harness.waitUntil(timeout: .seconds(4), "NetworkManager followed") {
            f.daemonLog.contains("the system bus is here: following NetworkManager")
        }
    }

    /// Waits (up to `within`, 20 s) for a window of `length` (3 s) in which no
    /// thread of `pid` wakes; says whether one came, and the counts of the last window.
    static func quietWindow(pid: Int32, length: Duration = .seconds(3), within: Duration = .seconds(20)) async throws -> (Bool, String) {
        let clock = ContinuousClock()
        let giveUp = clock.now + within
        var before = ThreadSwitches(pid: pid)
        var last = ""
        while clock.now < giveUp {
            try await Task.sleep(for: length)
            let after = ThreadSwitches(pid: pid)
            if after == before { return (true, "\(after.byName)") }
            last = "\(before.byName) → \(after.byName)"
            before = after
        }
        return (false, last)
    }
}

/// Voluntary context switches of every thread of a process, by thread id, with
/// the threads' names: equal when no thread slept and woke in between, and the
/// same threads live.
struct ThreadSwitches: Equatable {
    var byThread: [String: Int] = [:]
    var names: [String: String] = [:]

    init(pid: Int32) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let base = "/proc/\(pid)/task/\(task)"
            guard let status = try? String(contentsOfFile: "\(base)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                byThread[task] = Int(line.split(separator: "\t").last ?? "")
            }
            names[task] = (try? String(contentsOfFile: "\(base)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
    }

    /// Switches summed per thread name (a pool's threads share one).
    var byName: [String: Int] {
        byThread.reduce(into: [:]) { $0[names[$1.key] ?? "?", default: 0] += $1.value }
    }
}
