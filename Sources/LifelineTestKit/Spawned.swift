import Foundation
import LifelineCore
import Synchronization

/// A child process of the tests: every command, server and daemon any test
/// target starts goes through here.
///
/// Test code runs on threads that block most signals (SIGTERM among them), and a
/// child inherits its parent's signal mask and ignored signals: a server started
/// that way would shrug off SIGTERM, and a tmux server would outlive kill-server.
/// So a child always starts with an empty mask and every signal at its default
/// action, and SIGTERM stops it as it would outside the tests.
public final class Spawned: Sendable {
    /// Where standard input comes from.
    public enum Input: Sendable {
        case null
        case file(String)
        /// Written to a temporary file first: a pipe the child stops reading
        /// would stall the test writing into it.
        case bytes([UInt8])
    }

    /// Where standard output or standard error goes.
    public enum Output: Sendable, Equatable {
        case null
        /// Created, or emptied, when the child starts.
        case file(String)
        /// A temporary file, read back by `capturedStdout`/`capturedStderr` (and by
        /// `run`): a child writing a lot into a file never waits for the test to read.
        case capture
        /// For standard error: the same open file as standard output, so both
        /// streams land in one log in the order they were written.
        case stdout
    }

    public struct Failure: Error, CustomStringConvertible { public var description: String }

    public let pid: pid_t
    private let status = Mutex<Int32?>(nil)
    private let temporaries: [String]
    private let capturedOut: String?
    private let capturedErr: String?

    /// Starts `argv`; argv[0] is looked up in PATH unless it holds a slash.
    /// `environment` nil passes the test process's own environment on.
    /// `newProcessGroup`: the child heads a group of its own, which
    /// `killGroup()` ends with everything in it.
    public init(_ argv: [String], environment: [String: String]? = nil, stdin: Input = .null,
         stdout: Output = .null, stderr: Output = .null, newProcessGroup: Bool = false) throws {
        precondition(!argv.isEmpty, "nothing to run")
        precondition(stdout != .stdout, "stdout cannot follow itself")
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("spawned-\(UUID().uuidString.prefix(8))").path
        var temporaries: [String] = []
        func temporary(_ suffix: String) -> String {
            let p = "\(base).\(suffix)"
            temporaries.append(p)
            return p
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch stdin {
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
        case .bytes(let bytes):
            let path = temporary("in")
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw Failure(description: "cannot write \(path)") }
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
        }
        func direct(_ fd: Int32, _ output: Output, _ suffix: String) -> String? {
            switch output {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .capture:
                let path = temporary(suffix)
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                return path
            case .stdout: posix_spawn_file_actions_adddup2(&actions, 1, fd)
            }
            return nil
        }
        capturedOut = direct(1, stdout, "out")
        capturedErr = direct(2, stderr, "err")
        self.temporaries = temporaries

        var attributes = CleanSpawn.attributes(newProcessGroup: newProcessGroup)
        defer { posix_spawnattr_destroy(&attributes) }

        let program = argv[0].contains("/") ? argv[0] : (Self.which(argv[0]) ?? argv[0])
        let cArguments = ([program] + argv.dropFirst()).map { strdup($0) } + [nil]
        let cEnvironment = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            cArguments.forEach { free($0) }
            cEnvironment?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = cEnvironment.map { posix_spawn(&pid, program, &actions, &attributes, cArguments, $0) }
            ?? posix_spawn(&pid, program, &actions, &attributes, cArguments, environ)
        guard rc == 0 else {
            temporaries.forEach { unlink($0) }
            throw Failure(description: "cannot start \(program): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
    }

    /// Collects the exit status if the child has ended; never blocks. The pid is
    /// reaped once, under the lock, so no signal can go to a pid reused since.
    private func reap() -> Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, WNOHANG)
            guard r == pid else { return nil }
            // Exit code, or 128+n for a child ended by signal n, as a shell reports it.
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            return status
        }
    }

    public var isRunning: Bool { reap() == nil }

    /// The exit status once the child has ended (128+n for signal n), nil while it runs.
    public var exitStatus: Int32? { reap() }

    /// Waits until the child ends and returns its exit status (128+n for signal n).
    /// Polls rather than blocking in waitpid, so `isRunning` on another thread
    /// never waits behind it.
    @discardableResult
    public func wait() -> Int32 {
        while true {
            if let status = reap() { return status }
            usleep(2_000)
        }
    }

    /// Sends `signal` unless the child has already been reaped; false then.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        status.withLock { status in
            guard status == nil else { return false }
            return Glibc.kill(pid, signal) == 0
        }
    }

    /// SIGTERM, up to `timeout` for the child to end, then SIGKILL; reaps it
    /// either way and returns its exit status.
    @discardableResult
    public func stop(timeout: Duration = .seconds(5)) -> Int32 {
        signal(SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = reap() { return status }
            usleep(2_000)
        }
        return kill()
    }

    /// SIGKILL and reap: the child ends at once, as in a crash (even a stopped one).
    @discardableResult
    public func kill() -> Int32 {
        signal(SIGKILL)
        return wait()
    }

    /// SIGKILL to the child's whole process group (started with
    /// `newProcessGroup`), then reaps the child: what it started and left
    /// running in its group (daemons that forked away from it too) ends with it,
    /// even when the child itself has already ended. The kernel hands out no id
    /// a process group still uses, so the id names this group while anything
    /// is left in it.
    @discardableResult
    public func killGroup() -> Int32 {
        _ = Glibc.kill(-pid, SIGKILL)
        return kill()
    }

    /// What a `.capture` stdout received so far.
    public var capturedStdout: [UInt8] { Self.contents(capturedOut) }

    /// What a `.capture` stderr received so far.
    public var capturedStderr: [UInt8] { Self.contents(capturedErr) }

    private static func contents(_ path: String?) -> [UInt8] {
        path.flatMap { FileManager.default.contents(atPath: $0) }.map { Array($0) } ?? []
    }

    /// Runs `argv` to completion with both streams captured.
    public static func run(_ argv: [String], environment: [String: String]? = nil, stdin: Input = .null) throws
        -> (status: Int32, stdout: [UInt8], stderr: [UInt8]) {
        let child = try Spawned(argv, environment: environment, stdin: stdin, stdout: .capture, stderr: .capture)
        let status = child.wait()
        return (status, child.capturedStdout, child.capturedStderr)
    }

    /// The first executable `tool` in PATH.
    public static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { access($0, X_OK) == 0 }
    }

    deinit {
        kill()
        temporaries.forEach { unlink($0) }
    }
}
