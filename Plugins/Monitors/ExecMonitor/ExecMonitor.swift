import Glibc
import LifelineCore
import LifelinePlatform

/// `exec` monitor: the door for third-party monitors in any language.
/// Runs `command` (argv, never a shell) and reads one JSON object per line from
/// its standard output:
///
///     {"state": "offline"|"limited"|"portal"|"online", "interface": "wlan0",
///      "kind": "wifi", "reason": "…", "rtt_ms": 12.5, "metered": false}
///
/// Only `state` is required. A malformed line is dropped and logged (the first
/// few each minute one by one, the rest as a count, so a program printing
/// garbage cannot flood the journal); the program's standard error goes to the daemon's. When the program exits, the supervisor
/// starts it again after a back-off.
///
/// Config keys:
/// - `command` (array of strings, required): program and arguments; a program
///   without a slash is looked up in `PATH`.
/// - `role` (`"reachability"` or `"link"`, default `"reachability"`): whether the
///   program speaks for the internet (like the probe) or for the route (like netlink).
///   While the probe runs, a reachability verdict of the program asks the probe
///   to check at once, and the probe's answer decides (one source is no consensus).
/// - `checks` (bool, default false): the program can check on demand; each check
///   request (a route change, `Check()`, "Check now" on the toast) writes the line
///   `check` to its standard input, and `lifeline check` waits for its next line.
public struct ExecMonitor: Monitor {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        /// No default program: `validate()` asks for one.
        public var command: [String] = []
        public var role: Role = .reachability
        public var checks = false

        public enum Role: String, ConfigChoice {
            case reachability, link
        }

        public func validate() throws(ConfigValueError) {
            if command.isEmpty || command[0].isEmpty {
                throw ConfigValueError(key: "command", "must name a program: command = [\"/path/to/program\", \"arg\"]")
            }
        }
    }

    public static let kind = "exec"
    public static let summary = "Runs a program that prints one JSON observation per line."

    let config: Config
    let context: PluginContext
    /// Longer lines are dropped: a runaway program cannot grow the daemon's memory.
    static let maxLineLength = 64 * 1024

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public struct Exited: Error, CustomStringConvertible {
        public enum Status: Sendable, Equatable {
            case exited(Int32)
            case signaled(Int32)
        }
        public var command: String
        public var status: Status
        public var description: String {
            switch status {
            case .exited(let code): "\(command) exited with status \(code)"
            case .signaled(let signal): "\(command) was killed by signal \(signal)"
            }
        }
    }

    public func run(handle: MonitorHandle) async throws {
        let program = config.command[0]
        let role = config.role
        let logger = context.logger
        let checkRequests = config.checks ? handle.checkRequests() : nil
        let child = try await MonitorProgram.start(config.command)
        // Check requests become "check" lines on the program's stdin, for as
        // long as its output is being read.
        let forwarding = Task {
            guard let checkRequests else { child.closeInput(); return }
            for await _ in checkRequests {
                guard child.writeLine("check") else { break }
            }
        }
        var lines = LineSplitter(maxLength: Self.maxLineLength)
        var number = 0
        var drops = DropReport()
        func dropped(_ why: String) {
            if drops.shouldLog(at: .now) { logger.warning("\(program): line \(number) dropped: \(why)") }
        }
        func summarize(final: Bool = false) {
            if let count = drops.takeQuiet(at: .now, final: final) {
                logger.warning("\(program): \(count) more malformed lines dropped (up to line \(number))")
            }
        }
        do {
            defer {
                forwarding.cancel()
                summarize(final: true)
            }
            while let chunk = try await child.read() {
                for line in lines.feed(chunk) {
                    number += 1
                    summarize()
                    switch line {
                    case .tooLong(let length):
                        dropped("\(length) bytes is longer than \(Self.maxLineLength)")
                    case .text(let text):
                        switch ExecLine.parse(text, role: role) {
                        case .success(let observation): handle.publish(observation)
                        case .failure(let error): dropped("\(error)")
                        }
                    }
                }
            }
            throw Exited(command: program, status: try await child.exit())
        } catch let error as Exited {
            throw error
        } catch {
            // Cancelled (shutdown, reload): ask politely, then kill, in a task
            // of its own; a hung program must not hold up the daemon.
            child.stop(grace: .seconds(2))
            throw error
        }
    }
}

/// The monitor's program: started with `Spawn`, killed with the daemon
/// however the daemon ends, its standard output read without holding a thread.
final class MonitorProgram: Sendable {
    let child: Child
    private let output: Int32
    private let input: Int32

    private init(child: Child, output: Int32, input: Int32) {
        self.child = child
        self.output = output
        self.input = input
    }

    struct StartFailed: Error, CustomStringConvertible {
        var description: String
    }

    static func start(_ command: [String]) async throws -> MonitorProgram {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { throw StartFailed(description: "pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            throw StartFailed(description: "pipe: \(String(cString: strerror(errno)))")
        }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // The daemon never waits on the program: a full pipe drops a check line
        // rather than blocking, and reads wait through `DescriptorWaiting`.
        _ = fcntl(toChild[1], F_SETFL, O_NONBLOCK)
        _ = fcntl(fromChild[0], F_SETFL, O_NONBLOCK)
        var spawn = Spawn(.searched(command[0]), arguments: command)
        spawn.standardInput = toChild[0]
        spawn.standardOutput = fromChild[1]
        spawn.dieWithParent = true
        let child: Child
        do {
            child = try await spawn.startFromLifelongThread()
        } catch {
            for fd in toChild + fromChild { close(fd) }
            throw error
        }
        close(toChild[0])
        close(fromChild[1])
        return MonitorProgram(child: child, output: fromChild[0], input: toChild[1])
    }

    deinit {
        close(output)
        close(input)
    }

    /// The next bytes of output; nil at its end.
    func read() async throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if n > 0 { return Array(buffer[0..<n]) }
            if n == 0 { return nil }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                if await DescriptorWaiting.current.wait(for: output, events: Int16(POLLIN), until: .now + .seconds(86400)) == .cancelled {
                    throw CancellationError()
                }
            default: return nil
            }
        }
    }

    /// Writes one line to the program's input; false once it cannot take more.
    func writeLine(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        let n = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
        return n == bytes.count
    }

    func closeInput() { _ = shutdownInput() }

    private func shutdownInput() -> Int32 {
        // The descriptor stays allocated until deinit; /dev/null in its place
        // gives the program its end of file.
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        return null >= 0 ? dup2(null, input) : -1
    }

    /// Waits for the program's end (its output already ended) and reaps it.
    func exit() async throws -> ExecMonitor.Exited.Status {
        guard let ending = await child.exit() else { throw CancellationError() }
        return switch ending {
        case .exited(let code): .exited(code)
        case .signaled(let signal): .signaled(signal)
        }
    }

    /// SIGTERM, SIGKILL `grace` later if it still runs, then reaped, by a task
    /// of its own: the caller does not wait.
    func stop(grace: Duration) {
        let child = self.child
        Task { _ = await child.stop(grace: grace) }
    }
}

/// Tells about dropped lines without flooding the log: the first `limit` in a
/// window each get a log line, the rest are counted and reported as one number
/// once the window is over (or the program ends).
struct DropReport {
    let limit: Int
    let window: Duration
    private var windowStart: ContinuousClock.Instant?
    private var logged = 0
    private var quiet = 0

    init(limit: Int = 5, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    /// Whether this dropped line gets a log line of its own.
    mutating func shouldLog(at now: ContinuousClock.Instant) -> Bool {
        if let start = windowStart, now - start < window {
            if logged < limit {
                logged += 1
                return true
            }
            quiet += 1
            return false
        }
        windowStart = now
        logged = 1
        return true
    }

    /// How many lines were dropped without a word in a window that is over now
    /// (any window, when `final`), once; nil when there is nothing to tell.
    mutating func takeQuiet(at now: ContinuousClock.Instant, final: Bool = false) -> Int? {
        guard quiet > 0, let start = windowStart, final || now - start >= window else { return nil }
        defer { quiet = 0 }
        return quiet
    }
}

/// Splits a byte stream into lines, dropping (and reporting) lines that grow past `maxLength`.
struct LineSplitter {
    enum Line: Equatable {
        case text(String)
        case tooLong(Int)
    }

    let maxLength: Int
    private var pending: [UInt8] = []
    private var overflow = 0

    init(maxLength: Int) { self.maxLength = maxLength }

    mutating func feed(_ bytes: [UInt8]) -> [Line] {
        var out: [Line] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if overflow > 0 {
                    out.append(.tooLong(overflow))
                } else {
                    out.append(.text(String(decoding: pending, as: UTF8.self)))
                }
                pending.removeAll(keepingCapacity: true)
                overflow = 0
            } else if overflow > 0 {
                overflow += 1
            } else if pending.count >= maxLength {
                overflow = pending.count + 1
                pending.removeAll()
            } else {
                pending.append(byte)
            }
        }
        return out
    }
}
