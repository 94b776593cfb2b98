import Glibc
import LifelineCore

/// `log` sink: one JSON line per published transition, with every field of
/// SPEC §2 under its §2 name, fsync'd line by line and rotated by size.
///
/// Config keys:
/// - `path` (string): the log file; default `$XDG_STATE_HOME/lifeline/events.jsonl`.
/// - `max_size` (integer, bytes, default 1048576): rotate before the file would grow past it.
/// - `keep` (integer, default 5): rotated files kept as `path.1` (newest) … `path.N`.
public struct LogSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var path: String?
        public var maxSize: Int = 1 << 20
        public var keep: Int = 5

        enum CodingKeys: String, CodingKey {
            case path
            case maxSize = "max_size"
            case keep
        }

        public func validate() throws(ConfigValueError) {
            if let path, !path.hasPrefix("/") { throw ConfigValueError(key: "path", "must be an absolute path, got '\(path)'") }
            try require("max_size", maxSize, in: 1024...(1 << 30), unit: "bytes")
            try require("keep", keep, in: 0...100)
        }
    }

    public static let kind = "log"
    public static let summary = "Appends one JSON line per published transition to a file, with rotation."
    /// The log must not miss a transition, so transitions queue (bounded) instead of coalescing.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 4096)

    public let path: String
    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
        self.path = config.path ?? context.paths.defaultLogFile
    }

    public func run(updates: SinkUpdates) async throws {
        let file = try RotatingFile(path: path, maxSize: config.maxSize, keep: config.keep)
        var lastWritten: UInt64 = 0
        for await update in updates {
            let lost = updates.takeDroppedCount()
            if lost > 0 { context.logger.error("log sink fell behind: \(lost) transitions were not written to \(path)") }
            // Sequence 0 is the start-up `unknown`, not a published transition; a
            // replay after a restart must not write the same line twice.
            guard update.isTransition, update.event.sequence != lastWritten else { continue }
            try file.append(line: JSONText.object(update.event) + "\n")
            lastWritten = update.event.sequence
        }
    }
}

/// An append-only file of lines, fsync'd per line, rotated by size.
final class RotatingFile {
    let path: String
    let maxSize: Int
    let keep: Int
    private var fd: Int32 = -1
    private var size = 0

    init(path: String, maxSize: Int, keep: Int) throws {
        self.path = path
        self.maxSize = maxSize
        self.keep = keep
        try Files.makeDirectories(Files.directory(of: path))
        try open()
    }

    deinit { if fd >= 0 { close(fd) } }

    private func open() throws {
        fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Files.Error(path: path, operation: "cannot open", errno: errno) }
        var st = stat()
        size = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }

    func append(line: String) throws {
        let count = line.utf8.count
        if size > 0, size + count > maxSize { try rotate() }
        try Files.writeAll(fd, line.utf8, path: path)
        // The line is on disk before the next one is taken: a crash loses nothing published.
        guard fsync(fd) == 0 else { throw Files.Error(path: path, operation: "cannot fsync", errno: errno) }
        size += count
    }

    private func rotate() throws {
        close(fd)
        fd = -1
        if keep == 0 {
            unlink(path)
        } else {
            unlink("\(path).\(keep)")
            for n in stride(from: keep - 1, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
            rename(path, "\(path).1")
        }
        try open()
    }
}
