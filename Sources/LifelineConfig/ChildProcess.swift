import Glibc
import LifelineCore
import LifelinePlatform

/// Runs a short-lived helper process to completion, bounded in time and output.
/// Its standard input, output and error are socket pairs, all driven by one
/// `poll` loop: input goes out with MSG_NOSIGNAL, so a child that dies before it
/// has read everything cannot raise SIGPIPE in the daemon, and a child that
/// neither reads nor writes is killed at the deadline.
package enum ChildProcess {
    package struct Result {
        /// The exit status, when it exited.
        var exitCode: Int32?
        /// The signal that ended it, when one did.
        var signal: Int32?
        var output: [UInt8]
        /// The start of what it wrote to standard error.
        var errorText: String
        var timedOut: Bool
        var outputTooLarge: Bool
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(
        executable: String, arguments: [String], input: [UInt8], outputLimit: Int, timeout: Duration
    ) throws(Failure) -> Result {
        let stdin = try socketPair()
        let stdout = try socketPair()
        let stderr = try socketPair()
        let pid: pid_t
        do {
            // The child's ends are closed here whatever happens; the parent's below.
            defer { for fd in [stdin.child, stdout.child, stderr.child] { close(fd) } }
            do {
                pid = try spawn(executable, arguments, stdin: stdin.child, stdout: stdout.child, stderr: stderr.child)
            } catch {
                for fd in [stdin.parent, stdout.parent, stderr.parent] { close(fd) }
                throw error
            }
        }
        var toChild: Int32? = stdin.parent
        var fromChild: Int32? = stdout.parent
        var errors: Int32? = stderr.parent
        defer { for fd in [toChild, fromChild, errors].compactMap({ $0 }) { close(fd) } }
        for fd in [stdin.parent, stdout.parent, stderr.parent] { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }

        var result = Result(exitCode: nil, signal: nil, output: [], errorText: "", timedOut: false, outputTooLarge: false)
        var errorBytes: [UInt8] = []
        var written = 0
        if input.isEmpty, let fd = toChild { close(fd); toChild = nil }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while fromChild != nil || errors != nil {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else {
                result.timedOut = true
                break
            }
            var polled: [pollfd] = []
            if let fd = toChild { polled.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)) }
            if let fd = fromChild { polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if let fd = errors { polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            let (seconds, attoseconds) = left.components
            let ready = poll(&polled, nfds_t(polled.count), Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
            if ready < 0, errno != EINTR { break }
            guard ready > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                if entry.fd == toChild {
                    let n = input.withUnsafeBytes {
                        send(entry.fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL))
                    }
                    if n > 0 { written += n }
                    // All sent, or the child stopped reading for good: either way, done writing.
                    if written == input.count || (n < 0 && errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        toChild = nil
                    }
                } else if entry.fd == fromChild {
                    let n = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        guard result.output.count + n <= outputLimit else {
                            result.outputTooLarge = true
                            break
                        }
                        result.output += chunk[0..<n]
                    } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        fromChild = nil
                    }
                } else if entry.fd == errors {
                    let n = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        errorBytes += chunk[0..<min(n, max(0, 4096 - errorBytes.count))]
                    } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        errors = nil
                    }
                }
            }
            if result.outputTooLarge { break }
        }
        if result.timedOut || result.outputTooLarge { kill(pid, SIGKILL) }
        let status = reap(pid, until: deadline, clock: clock)
        if let status {
            if status & 0x7F == 0 {
                result.exitCode = (status >> 8) & 0xFF
            } else {
                result.signal = status & 0x7F
            }
        } else {
            result.timedOut = true
        }
        result.errorText = String(decoding: errorBytes, as: UTF8.self)
        return result
    }

    private static func socketPair() throws(Failure) -> (parent: Int32, child: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw Failure(description: "socketpair: \(errnoText())")
        }
        return (fds[0], fds[1])
    }

    /// Waits for `pid` until `deadline`, then kills it and waits for good.
    private static func reap(_ pid: pid_t, until deadline: ContinuousClock.Instant, clock: ContinuousClock) -> Int32? {
        var status: Int32 = 0
        while clock.now < deadline {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r < 0, errno != EINTR { return nil }
            // Bounded poll for the exit that follows the closed pipe (microseconds, normally).
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return nil
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32
    ) throws(Failure) -> pid_t {
        // A crashing child should die at once: the Swift runtime would otherwise
        // spend seconds printing a backtrace nobody reads.
        var environment = currentEnvironment().filter { !$0.hasPrefix("SWIFT_BACKTRACE=") }
        environment.append("SWIFT_BACKTRACE=enable=no")
        var spawn = Spawn(.path(executable), arguments: ["lifeline"] + arguments, environment: environment)
        (spawn.standardInput, spawn.standardOutput, spawn.standardError) = (stdin, stdout, stderr)
        do {
            return try spawn.start()
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    private static func currentEnvironment() -> [String] {
        var result: [String] = []
        var p = environ
        while let entry = p.pointee {
            result.append(String(cString: entry))
            p += 1
        }
        return result
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    /// Reads to the end; nil on an error or when there is more than `limit`
    /// (unless `truncate`, which keeps the first `limit` bytes).
    package static func readAll(fd: Int32, limit: Int, truncate: Bool = false) -> [UInt8]? {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { return data }
            if data.count + n > limit {
                guard truncate else { return nil }
                data += chunk[0..<(limit - data.count)]
                return data
            }
            data += chunk[0..<n]
        }
    }

    package static func writeAll(fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
