import LifelineCore

/// Reads the event log back (for `lifeline history`): the rotated files oldest
/// first, then the current one. Lines that do not parse are skipped and counted.
public enum EventLog {
    public struct Contents: Sendable {
        public var events: [StateEvent]
        public var badLines: Int
        /// The files that had unreadable lines, oldest first, and how many each.
        public var badLinesByFile: [(path: String, count: Int)]
    }

    public static func read(path: String, keep: Int = 100) -> Contents {
        var files: [String] = []
        for n in stride(from: keep, through: 1, by: -1) where Files.exists("\(path).\(n)") { files.append("\(path).\(n)") }
        files.append(path)
        var events: [StateEvent] = []
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
                } else {
                    bad += 1
                }
            }
            if bad > badBefore { badByFile.append((file, bad - badBefore)) }
        }
        return Contents(events: events, badLines: bad, badLinesByFile: badByFile)
    }

    /// The sequence number of the last whole line of the log: the current file,
    /// or the newest rotated one that has a line. Nil when there is none, or the
    /// number is not one the daemon could have written.
    public static func lastSequence(path: String, keep: Int = 100) -> UInt64? {
        for file in [path] + (0..<min(max(keep, 0), 100)).map({ "\(path).\($0 + 1)" }) {
            // A line is a few hundred bytes; 64 KiB holds the last one with room to spare.
            guard let tail = try? Files.readTail(file, limit: 64 << 10) else { continue }
            guard let end = tail.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            let start = tail[..<end].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            var sequence: Int64?
            _ = FlatJSON.forEachMember(Array(tail[start..<end])) { key, value in
                if key == "sequence" { sequence = value.int64 }
            }
            guard let sequence, let valid = StateRecord.validSequence(sequence) else { return nil }
            return valid
        }
        return nil
    }
}
