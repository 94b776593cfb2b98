import LifelineCore
import LifelinePlatform

/// Reads the event log back (for `lifeline history`): the rotated files oldest
/// first, then the current one. Lines that do not parse are skipped and counted.
/// Transitions and marks (sleep, wake, stop: `LogMark`) are told apart.
public enum EventLog {
    public struct Contents: Sendable {
        public var events: [StateEvent]
        /// The marks, each with the number of transitions that came before it in the log.
        public var marks: [(before: Int, mark: LogMark)] = []
        /// The quality readings, oldest first (`QualityMark`).
        public var qualities: [QualityMark] = []
        public var badLines: Int
        /// The files that had unreadable lines, oldest first, and how many each.
        public var badLinesByFile: [(path: String, count: Int)]
    }

    public static func read(path: String, keep: Int = 100) -> Contents {
        var files: [String] = []
        for n in stride(from: keep, through: 1, by: -1) where Files.exists("\(path).\(n)") { files.append("\(path).\(n)") }
        files.append(path)
        var events: [StateEvent] = []
        var marks: [(before: Int, mark: LogMark)] = []
        var qualities: [QualityMark] = []
        var bad = 0
        var badByFile: [(path: String, count: Int)] = []
        for file in files {
            // Never blocks on a FIFO planted at the log's path; past 256 MiB only the newest part counts.
            guard let bytes = try? Files.readTail(file, limit: 256 << 20) else { continue }
            let badBefore = bad
            for line in bytes.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                // Numbers out of range count as unreadable: the file is anyone's to edit,
                // and arithmetic on them (durations, cut-offs) could overflow.
                if let (event, _) = StateRecord.parseEvent(line) {
                    events.append(event)
                } else if let mark = LogMark.parse(line) {
                    marks.append((events.count, mark))
                } else if let quality = QualityMark.parse(line) {
                    qualities.append(quality)
                } else {
                    bad += 1
                }
            }
            if bad > badBefore { badByFile.append((file, bad - badBefore)) }
        }
        var contents = Contents(events: events, marks: marks, badLines: bad, badLinesByFile: badByFile)
        contents.qualities = qualities
        return contents
    }

    /// The sequence number of the last transition of the log: the last whole
    /// line of the current file, or of the newest rotated one that has one,
    /// stepping over marks (sleep, wake, stop), which carry no number. Nil when
    /// there is none, or the number is not one the daemon could have written.
    public static func lastSequence(path: String, keep: Int = 100) -> UInt64? {
        for file in [path] + (0..<min(max(keep, 0), 100)).map({ "\(path).\($0 + 1)" }) {
            // A line is a few hundred bytes; 64 KiB holds the last ones with room to spare.
            guard let tail = try? Files.readTail(file, limit: 64 << 10) else { continue }
            guard var end = tail.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            while true {
                let start = tail[..<end].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
                let line = Array(tail[start..<end])
                if LogMark.isMark(line) {
                    // Marks only, back to the start of what was read: look in the older file.
                    guard start > 0 else { break }
                    end = start - 1
                    continue
                }
                var sequence: Int64?
                _ = FlatJSON.forEachMember(line) { key, value in
                    if key == "sequence" { sequence = value.int64 }
                }
                guard let sequence, let valid = StateRecord.validSequence(sequence) else { return nil }
                return valid
            }
        }
        return nil
    }
}
