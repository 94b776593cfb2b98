import LifelineCore
import LifelinePlatform
import Logging
import Synchronization

/// `prometheus` sink: the state and outage counts as a node_exporter
/// textfile-collector file, so a fleet of machines is watched with the
/// node_exporter and Prometheus it already runs. The file is replaced whole on
/// every update and every `interval` besides (outage seconds grow while an
/// outage lasts, and the file's age shows the daemon is alive):
///
///     lifeline_state{state="offline"} 1            (0 for every other state)
///     lifeline_transitions_total 12
///     lifeline_outages_total 3
///     lifeline_outage_seconds_total 187.5
///     lifeline_probe_rtt_seconds 0.023             (absent while unknown)
///     lifeline_last_change_timestamp_seconds 1774958709.1
///
/// Counters start at 0 when the daemon starts or reloads its configuration.
///
/// Config keys:
/// - `path` (string, required): the file, ending in `.prom`, in the folder given
///   to node_exporter's `--collector.textfile.directory`. Written mode 0644.
/// - `interval` (duration, default "15s"): how often the file is rewritten
///   when nothing changes.
public struct PrometheusSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var path: String?
        public var interval = ConfigDuration.seconds(15)

        public func validate() throws(ConfigValueError) {
            guard let path else {
                throw ConfigValueError(key: "path", "is required: the .prom file node_exporter's textfile collector reads")
            }
            if !path.hasPrefix("/") { throw ConfigValueError(key: "path", "must be an absolute path, got '\(path)'") }
            // node_exporter reads only files named *.prom; any other name would be silently ignored.
            if !path.hasSuffix(".prom") || path.hasSuffix("/.prom") {
                throw ConfigValueError(key: "path", "must be a file name ending in .prom (node_exporter reads no other), got '\(path)'")
            }
            try require("interval", interval, in: .seconds(1)...ConfigDuration.seconds(3600))
        }
    }

    public static let kind = "prometheus"
    public static let summary = "Writes the state and outage counters for node_exporter's textfile collector."
    /// Every transition is seen, so the transition and outage counts are exact
    /// even when the file system is slow.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 1024)

    let path: String
    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        try config.validate()
        self.path = config.path ?? ""
        self.config = config
        self.context = context
    }

    public func run(updates: SinkUpdates) async throws {
        // Writing and renaming a file can block on a slow disk; on a thread of
        // their own they never hold up the cooperative pool.
        let disk = SerialThread(name: "lifeline-prom")
        defer { disk.stop() }
        let writer = MetricsWriter(path: path, interval: config.interval, logger: context.logger)
        // Each write reads the tally when its turn comes, so writes that queue
        // up behind a slow disk still put the newest figures in the file.
        @Sendable func write() async { _ = try? await disk.run { writer.write() } }

        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: config.interval.duration)) != nil { await write() }
            }
            for await update in updates {
                let lost = updates.takeDroppedCount()
                if lost > 0 { context.logger.error("prometheus sink fell behind: \(lost) transitions were not counted") }
                writer.take(update)
                await write()
            }
            group.cancelAll()
        }
    }
}

/// The tally, shared by the loop that takes updates and the file thread that writes it.
final class MetricsWriter: Sendable {
    let path: String
    let interval: ConfigDuration
    let logger: Logger
    private let tally = Mutex(MetricsTally(startedAt: WallClock.micros()))
    /// Touched on the file thread only.
    private let export = MetricsExport()
    /// Failed writes in a row: the first is logged, and the next success.
    private let failures = Mutex(0)

    init(path: String, interval: ConfigDuration, logger: Logger) {
        self.path = path
        self.interval = interval
        self.logger = logger
    }

    func take(_ update: Update) {
        tally.withLock { $0.take(update, now: WallClock.micros()) }
    }

    /// Blocks on the disk: call it on the file thread.
    func write() {
        let bytes = export.render(tally.withLock { $0 }, now: WallClock.micros())
        do {
            try MetricsFile.replace(path, with: bytes)
            let failed = failures.withLock { count in
                defer { count = 0 }
                return count
            }
            if failed > 0 { logger.notice("writing \(path) again after \(failed) failed attempts") }
        } catch {
            let first = failures.withLock { count in
                defer { count += 1 }
                return count == 0
            }
            if first { logger.error("\(error); trying again on the next change and every \(interval)") }
        }
    }
}
