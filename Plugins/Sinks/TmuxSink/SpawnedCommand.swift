import Glibc
import LifelineCore
import LifelinePlatform

/// One run of a program to its end, blocking the calling thread.
///
/// Started with `posix_spawn`: the child is cloned without a copy of the
/// daemon's page tables (a `fork` of a multi-threaded daemon copies them, then
/// takes a copy-on-write fault for every page either side touches, which was
/// most of a push's time), with no signal blocked or ignored, with no
/// descriptor of the daemon but the three it is given, and without `TMUX` and
/// `TMUX_PANE`: inside a tmux pane they would point tmux at that server's
/// current client, and every call here names its target. Standard output is
/// kept up to `outputLimit` bytes, the start of standard error for the message;
/// past its time limit, or past the output limit, the child is killed with
/// SIGKILL. It is always reaped.
enum SpawnedCommand {
    static let outputLimit = 64 * 1024
    static let errorLimit = 4096

    static func run(_ program: String, _ arguments: [String], timeout: Duration) -> CommandRunner.Outcome {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        guard let output = socketPair() else { return .failed("socketpair: \(String(cString: strerror(errno)))") }
        guard let errors = socketPair() else {
            let why = String(cString: strerror(errno))
            close(output.parent); close(output.child)
            return .failed("socketpair: \(why)")
        }
        let spawned = spawn(program, arguments, output: output.child, errors: errors.child)
        close(output.child)
        close(errors.child)
        let pid: pid_t
        switch spawned {
        case .success(let started): pid = started
        case .failure(let code):
            close(output.parent)
            close(errors.parent)
            return code == ENOENT ? .notFound : .failed("cannot start \(program): \(String(cString: strerror(code)))")
        }

        var outputBytes: [UInt8] = []
        var errorBytes: [UInt8] = []
        var fromChild: Int32? = output.parent
        var errorsFromChild: Int32? = errors.parent
        var timedOut = false
        var tooLong = false
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while fromChild != nil || errorsFromChild != nil {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else {
                timedOut = true
                break
            }
            var polled: [pollfd] = []
            if let fd = fromChild { polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if let fd = errorsFromChild { polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&polled, nfds_t(polled.count), milliseconds(left))
            if ready < 0, errno != EINTR { break }
            guard ready > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR || errno == EAGAIN { continue }
                if entry.fd == fromChild {
                    if n > 0, outputBytes.count + n > outputLimit { tooLong = true }
                    if n > 0, !tooLong { outputBytes += chunk[0..<n] }
                    if n <= 0 || tooLong { close(entry.fd); fromChild = nil }
                } else {
                    if n > 0 { errorBytes += chunk[0..<min(n, max(0, errorLimit - errorBytes.count))] }
                    if n <= 0 { close(entry.fd); errorsFromChild = nil }
                }
            }
            if tooLong { break }
        }
        for fd in [fromChild, errorsFromChild].compactMap({ $0 }) { close(fd) }
        if timedOut || tooLong { kill(pid, SIGKILL) }
        let status = reap(pid, until: deadline, clock: clock)
        if timedOut || status == nil { return .timedOut }
        if tooLong { return .failed("printed more than \(outputLimit / 1024) KiB") }
        let raw = status!
        if raw & 0x7F == 0, (raw >> 8) & 0xFF == 0 { return .ok(output: String(decoding: outputBytes, as: UTF8.self)) }
        let how = raw & 0x7F == 0 ? "exit status \((raw >> 8) & 0xFF)" : "killed by signal \(raw & 0x7F)"
        let message = String(decoding: errorBytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return .failed(how + (message.isEmpty ? "" : ": \(message)"))
    }

    private enum Spawned {
        case success(pid_t)
        case failure(Int32)
    }

    private static func spawn(_ program: String, _ arguments: [String], output: Int32, errors: Int32) -> Spawned {
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        // Searches PATH for a bare name, as a shell would.
        var spawn = Spawn(.searched(program), arguments: [program] + arguments, environment: environment())
        spawn.standardInput = null
        spawn.standardOutput = output
        spawn.standardError = errors
        do throws(Spawn.Failure) {
            return .success(try spawn.start())
        } catch {
            return .failure(error.code)
        }
    }

    /// The daemon's environment without `TMUX` and `TMUX_PANE`.
    private static func environment() -> [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("TMUX="), !text.hasPrefix("TMUX_PANE=") { entries.append(text) }
            cursor += 1
        }
        return entries
    }

    private static func socketPair() -> (parent: Int32, child: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// Waits for `pid` until `deadline`, then kills it and waits for good: nil
    /// when it had to be killed. A child that closed its output is normally
    /// gone within microseconds, so the first looks come quickly.
    private static func reap(_ pid: pid_t, until deadline: ContinuousClock.Instant, clock: ContinuousClock) -> Int32? {
        var status: Int32 = 0
        var pause = 20_000  // ns, doubled up to 5 ms
        while clock.now < deadline {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r < 0, errno != EINTR { return nil }
            var wait = timespec(tv_sec: 0, tv_nsec: pause)
            nanosleep(&wait, nil)
            pause = min(pause * 2, 5_000_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return nil
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }
}
