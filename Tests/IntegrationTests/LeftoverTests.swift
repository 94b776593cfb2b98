import Foundation
import LifelineTestKit
import Testing

/// Nothing a test starts outlives it: the desktops' processes, which run as
/// another user with a cleared environment, included.
@Suite(.serialized)
struct LeftoverTests {
    /// The processes of the desktop's user whose environment names `home`: the
    /// desktops give each of theirs a home of its own.
    static func processes(withHome home: String) -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.filter { pid in
            guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "HOME=\(home)" }
        }.map { pid in
            let argv = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self) } ?? ""
            return "\(pid) \(argv.replacingOccurrences(of: "\0", with: " "))"
        }
    }

    /// A GNOME Shell desktop that does not come up in time stops everything it
    /// had started (the buses, logind, the shell) before its start fails.
    @Test(.requires(.rootAnd(GnomeShellScreen.tools), LogindMock.requirement))
    func aGnomeDesktopThatFailsToStartLeavesNothingRunning() async throws {
        let screen = try GnomeShellScreen()
        await withKnownIssue("no shell takes its notification name in 100 ms") {
            try await screen.start(startUp: .milliseconds(100))
        }
        #expect(Self.processes(withHome: screen.root.path) == [])
    }

    /// `scripts/no-leftovers.sh` names a process of `nobody` that a command
    /// started with a cleared environment (no marker to find it by) and left running.
    @Test(.requires(.rootAnd(["bash", "setpriv", "sleep"])))
    func theLeftoverCheckFindsADesktopUsersProcessWithoutTheMarker() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-leftover-\(getpid())").path
        let leave = "setpriv --reuid=nobody --regid=nogroup --clear-groups env -i HOME=\(home) sleep 300 </dev/null >/dev/null 2>&1 &"
        let r = try Harness.run([PackagingTests.repo.appendingPathComponent("scripts/no-leftovers.sh").path, "sh", "-c", leave])
        let left = Self.processes(withHome: home)
        for line in left { kill(pid_t(line.prefix { $0 != " " })!, SIGKILL) }
        #expect(left.count == 1, "\(left)")
        #expect(r.status == 1)
        #expect(r.stderr.contains("the tests left these processes running:") && r.stderr.contains("sleep 300"), "\(r.stderr)")
    }

    /// A `lifeline-*` file a command made in the temporary folder and left there
    /// is named; one that was there before is not.
    @Test(.requires(.tools(["bash"])))
    func theLeftoverCheckNamesAFileLeftInTheTemporaryFolder() throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("leftover-files-\(getpid())").path
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        FileManager.default.createFile(atPath: temporary + "/lifeline-before", contents: nil)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary
        let script = PackagingTests.repo.appendingPathComponent("scripts/no-leftovers.sh").path

        let clean = try Harness.run([script, "sh", "-c", "touch $TMPDIR/lifeline-gone && rm $TMPDIR/lifeline-gone"], environment: environment)
        #expect(clean.status == 0, "\(clean.stderr)")
        let left = try Harness.run([script, "sh", "-c", "mkdir $TMPDIR/lifeline-sysbus-1"], environment: environment)
        #expect(left.status == 1)
        #expect(left.stderr.contains("the tests left these files behind:\n\(temporary)/lifeline-sysbus-1"), "\(left.stderr)")
        #expect(!left.stderr.contains("lifeline-before"))
    }

    /// An X server killed rather than stopped leaves its lock in /tmp, wherever TMPDIR points.
    @Test(.requires(.tools(["bash"])))
    func theLeftoverCheckNamesAnXServerLockLeftBehind() throws {
        let lock = "/tmp/.X\(60_000 + getpid() % 5_000)-lock"
        defer { unlink(lock) }
        let script = PackagingTests.repo.appendingPathComponent("scripts/no-leftovers.sh").path
        let left = try Harness.run([script, "sh", "-c", "echo 1 > \(lock)"])
        #expect(left.status == 1)
        #expect(left.stderr.contains("the tests left these files behind:\n\(lock)"), "\(left.stderr)")
    }

    /// What that user ran before the check began (the machine's own) is not counted.
    @Test(.requires(.rootAnd(["bash", "setpriv", "sleep"])))
    func theLeftoverCheckLeavesTheDesktopUsersEarlierProcessesAlone() throws {
        let before = try Spawned(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env", "-i", "sleep", "300"])
        defer { before.kill() }
        usleep(20_000)  // not a readiness wait: the check compares start times, in ticks of 10 ms
        let r = try Harness.run([PackagingTests.repo.appendingPathComponent("scripts/no-leftovers.sh").path, "true"])
        #expect(r.status == 0, "\(r.stderr)")
    }
}
