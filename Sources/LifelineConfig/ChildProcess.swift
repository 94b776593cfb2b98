import Glibc
import LifelineCore
import LifelinePlatform

/// Runs a short-lived helper process to completion, bounded in time and output.
/// Its standard input, output and error are socket pairs, moved by
/// `Child.collectWaiting`: input goes out with MSG_NOSIGNAL, so a child that
/// dies before it has read everything cannot raise SIGPIPE in the daemon, and a
/// child that neither reads nor writes is killed at the deadline.
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
        let deadline = ContinuousClock.now + timeout
        let stdin = try socketPair()
        let stdout = try socketPair()
        let stderr = try socketPair()
        let child: Child
        do {
            // The child's ends are closed here whatever happens; the parent's by the collector.
            defer { for fd in [stdin.child, stdout.child, stderr.child] { close(fd) } }
            do {
                child = try spawn(executable, arguments, stdin: stdin.child, stdout: stdout.child, stderr: stderr.child)
            } catch {
                for fd in [stdin.parent, stdout.parent, stderr.parent] { close(fd) }
                throw error
            }
        }
        let collected = child.collectWaiting(output: stdout.parent, errors: stderr.parent, input: input, inputFD: stdin.parent,
                                             outputLimit: outputLimit, by: deadline)
        var result = Result(exitCode: nil, signal: nil, output: collected.output,
                            errorText: String(decoding: collected.errors, as: UTF8.self),
                            timedOut: collected.timedOut, outputTooLarge: collected.outputTooLarge)
        if !collected.timedOut {
            switch collected.ending {
            case .exited(let code): result.exitCode = code
            case .signaled(let signal): result.signal = signal
            }
        }
        return result
    }

    private static func socketPair() throws(Failure) -> (parent: Int32, child: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, SocketConstants.stream | SocketConstants.closeOnExec, 0, &fds) == 0 else {
            throw Failure(description: "socketpair: \(errnoText())")
        }
        return (fds[0], fds[1])
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32
    ) throws(Failure) -> Child {
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
