import LifelineCore
import LifelineFormats
import LifelinePlatform

/// Where the sequence numbers of a new daemon start: after the last one an
/// earlier run published, so they keep increasing across restarts and no two
/// lines of the log share one.
enum StartingSequence {
    /// The larger of the state file's sequence (left behind when the last daemon
    /// did not stop cleanly) and the last line of each event log; 0 when neither
    /// has a valid one.
    static func find(stateFile: String, logs: [(path: String, keep: Int)]) -> UInt64 {
        var candidates: [UInt64] = []
        // Bounded, non-blocking, our own regular file only: a FIFO, a link or a
        // huge file at that path must not hold up the start or feed it numbers.
        if let bytes = Files.readOwnFile(stateFile, limit: 64 << 10), let record = StateRecord.parse(bytes) {
            candidates.append(record.event.sequence)
        }
        for log in logs {
            if let last = EventLog.lastSequence(path: log.path, keep: log.keep) { candidates.append(last) }
        }
        return candidates.max() ?? 0
    }
}

extension DaemonConfig {
    /// Every event log the config writes, with how many rotated files it keeps.
    public func eventLogs(paths: Paths) -> [(path: String, keep: Int)] {
        sinks.compactMap { Registry.eventLog(written: $0, paths: paths) }
    }

    /// The event log: the file the first `log` sink writes (the default file
    /// when none does), where a plugin that reads the history looks.
    public func eventLog(paths: Paths) -> String {
        eventLogs(paths: paths).first?.path ?? paths.defaultLogFile
    }
}
