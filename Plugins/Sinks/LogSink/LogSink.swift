import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform

/// `log` sink: one JSON line per published transition, with every field of
/// the event under its documented name, fsync'd and rotated by size. Between
/// them, a line when the machine goes to sleep, one when it wakes up and one
/// when the daemon stops cleanly (`LogMark`), so `history` knows when nobody
/// was looking. Lines that
/// queued during a write go out together in the next (one fsync for a burst).
/// Every line is whole. When the disk refuses a line (full, failing) the sink
/// keeps it and the transitions behind it (up to 4096, and says how many it had
/// to drop past that) and tries again every second at most, so logging resumes
/// on its own once there is room.
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
    /// The log must not miss a transition, so transitions queue (bounded) instead
    /// of coalescing; while the disk refuses them they wait here.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 4096)

    /// How long a failed write waits before it is tried again: short at first, so
    /// logging resumes within about a second once the disk takes writes again.
    static let retryBackoff = (first: Duration.milliseconds(50), longest: Duration.seconds(1))

    public let path: String
    let config: Config
    let context: PluginContext
    private let makeFile: @Sendable () -> any LineFile

    public init(config: Config, context: PluginContext) throws {
        let path = config.path ?? context.paths.defaultLogFile
        self.init(config: config, context: context) { RotatingFile(path: path, maxSize: config.maxSize, keep: config.keep) }
    }

    /// With the file the lines go to (tests give one that fails).
    init(config: Config, context: PluginContext, file makeFile: @escaping @Sendable () -> any LineFile) {
        self.config = config
        self.context = context
        self.path = config.path ?? context.paths.defaultLogFile
        self.makeFile = makeFile
    }

    public func run(updates: SinkUpdates) async throws {
        // fsync and rotation block; on their own thread they never hold up the
        // cooperative pool, where the debounce timer runs.
        let disk = SerialThread(name: "lifeline-log")
        defer { disk.stop() }
        let file = makeFile()
        var lastWritten: UInt64 = 0
        var marks = LogMarkWriter()
        var qualities = QualityMarkWriter()
        for await update in updates {
            reportDropped(updates)
            // What queued while the last write was fsync'd goes out together, in one
            // write and one fsync: a burst reaches the disk as fast as it is published,
            // instead of one fsync per line behind it, where a crash would lose the backlog.
            var lines: [String] = []
            for next in [update] + updates.takeWaiting(limit: Self.batchLimit) {
                // An update is the bus as it was once the change was made: a sleep it
                // shows had begun before the transition it carries was published.
                for mark in marks.marks(for: next) { lines.append(mark.line + "\n") }
                if let mark = qualities.mark(for: next, now: WallClock.micros()) { lines.append(mark.line + "\n") }
                // Sequence 0 is the start-up `unknown`, not a published transition; a
                // replay after a restart must not write the same line twice.
                guard next.isTransition, next.event.sequence != lastWritten else { continue }
                lines.append(JSONText.object(next.event) + "\n")
                lastWritten = next.event.sequence
            }
            for chunk in Self.chunks(lines, maxBytes: config.maxSize) {
                try await write(chunk, to: file, on: disk, updates: updates)
            }
        }
    }

    /// At most this many transitions go to the disk in one write.
    static let batchLimit = 1024

    /// `lines` joined into as few chunks as fit in `maxBytes` each (a line longer
    /// than that is a chunk of its own), so a batch never makes a file outgrow
    /// `max_size` that single lines would not.
    static func chunks(_ lines: [String], maxBytes: Int) -> [String] {
        var out: [String] = []
        var current = ""
        var size = 0
        for line in lines {
            let length = line.utf8.count
            if size > 0, size + length > maxBytes {
                out.append(current)
                current = ""
                size = 0
            }
            current += line
            size += length
        }
        if size > 0 { out.append(current) }
        return out
    }

    /// Writes `line` (one or more whole lines), retrying with a back-off until the
    /// disk takes it. The sink does not throw on a failed write: the lines in hand
    /// and the transitions queued behind them would then be at the mercy of a restart.
    private func write(_ line: String, to file: any LineFile, on disk: SerialThread, updates: SinkUpdates) async throws {
        var delay = Self.retryBackoff.first
        var failures = 0
        while true {
            do {
                try await disk.run { try file.append(line: line) }
                if failures > 0 { context.logger.notice("writing to \(path) again after \(failures) failed attempts") }
                return
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if failures == 0 {
                    context.logger.error("\(error); keeping the transitions and retrying")
                }
                failures += 1
            }
            reportDropped(updates)
            try await Task.sleep(for: delay)
            delay = min(delay * 2, Self.retryBackoff.longest)
        }
    }

    private func reportDropped(_ updates: SinkUpdates) {
        let lost = updates.takeDroppedCount()
        if lost > 0 { context.logger.error("log sink fell behind: \(lost) transitions were not written to \(path)") }
    }
}

/// Where the log sink's lines go: each call puts its whole lines (one or a
/// batch) on disk, or throws and leaves the file as it was.
protocol LineFile: AnyObject, Sendable {
    func append(line: String) throws
}

/// An append-only file of lines, fsync'd per line, rotated by size. A line is
/// either all there or not at all: a failed write is cut back off, and a torn
/// last line (a crash in the middle of a write) is cut when the file is opened.
/// Used from one thread at a time (the log's own), hence unchecked.
final class RotatingFile: LineFile, @unchecked Sendable {
    let path: String
    let maxSize: Int
    let keep: Int
    /// `Files.writeAll`; tests put in one that writes part of the line and fails.
    private let writeBytes: (Int32, [UInt8], String) throws -> Void
    private var fd: Int32 = -1
    private var size = 0
    /// A file was created or renamed and its folder not yet fsync'd.
    private var folderChanged = false

    init(path: String, maxSize: Int, keep: Int,
         write: @escaping (Int32, [UInt8], String) throws -> Void = { try Files.writeAll($0, $1, path: $2) }) {
        self.path = path
        self.maxSize = maxSize
        self.keep = keep
        self.writeBytes = write
    }

    deinit { if fd >= 0 { close(fd) } }

    func append(line: String) throws {
        if fd < 0 { try open() }
        let bytes = Array(line.utf8)
        if size > 0, size + bytes.count > maxSize { try rotate() }
        if folderChanged {
            // Without this a crash could lose the new file's name, and every line in it.
            try Files.syncDirectory(Files.directory(of: path))
            folderChanged = false
        }
        do {
            try writeBytes(fd, bytes, path)
            // On disk before the next batch is taken: a crash loses at most what was
            // published while this write was under way.
            guard fsync(fd) == 0 else { throw Files.Error(path: path, operation: "cannot fsync", errno: errno) }
        } catch {
            // Take back the part that did reach the file, so the retry (or the
            // next line) starts on a line of its own instead of gluing to half of this one.
            if ftruncate(fd, off_t(size)) != 0 { closeFile() }  // reopening cuts it
            throw error
        }
        size += bytes.count
    }

    private func open() throws {
        try Files.makeDirectories(Files.directory(of: path))
        let created = !Files.exists(path)
        // Read and write: reading finds a torn last line.
        fd = Glibc.open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Files.Error(path: path, operation: "cannot open", errno: errno) }
        if created { folderChanged = true }
        do {
            size = try Files.cutAfterLastNewline(fd, path: path)
        } catch {
            closeFile()
            throw error
        }
    }

    private func closeFile() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    private func rotate() throws {
        closeFile()
        if keep == 0 {
            unlink(path)
        } else {
            unlink("\(path).\(keep)")
            for n in stride(from: keep - 1, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
            rename(path, "\(path).1")
        }
        folderChanged = true
        try open()
    }
}
