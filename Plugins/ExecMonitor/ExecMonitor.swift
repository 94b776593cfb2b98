import LifelineCore
import Subprocess

#if canImport(System)
import System
#else
import SystemPackage
#endif

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
        public var command: String
        public var status: TerminationStatus
        public var description: String {
            switch status {
            case .exited(let code): "\(command) exited with status \(code)"
            case .signaled(let signal): "\(command) was killed by signal \(signal)"
            }
        }
    }

    public func run(handle: MonitorHandle) async throws {
        let program = config.command[0]
        let executable: Executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
        var options = PlatformOptions()
        // Ask politely on shutdown, then kill: a hung monitor must not hold up the daemon.
        options.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))]
        let role = config.role
        let logger = context.logger
        let checkRequests = config.checks ? handle.checkRequests() : nil
        let result = try await Subprocess.run(
            executable,
            arguments: Arguments(Array(config.command.dropFirst())),
            platformOptions: options,
            input: .inputWriter,
            output: .sequence,
            error: .currentStandardError
        ) { execution in
            let writer = execution.standardInputWriter
            // Check requests become "check" lines on the program's stdin, for as
            // long as its output is being read.
            let forwarding = Task {
                guard let checkRequests else { _ = try? await writer.finish(); return }
                for await _ in checkRequests {
                    guard (try? await writer.write("check\n")) != nil else { break }
                }
            }
            defer { forwarding.cancel() }
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
            defer { summarize(final: true) }
            for try await buffer in execution.standardOutput {
                let chunk = buffer.withUnsafeBytes { Array($0) }
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
        }
        throw Exited(command: program, status: result.terminationStatus)
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
