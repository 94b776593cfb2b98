import FoundationEssentials
import LifelineCore

/// Reads the event log back (for `lifeline history`): the rotated files oldest
/// first, then the current one. Lines that do not parse are skipped and counted.
public enum EventLog {
    public struct Contents: Sendable {
        public var events: [StateEvent]
        public var badLines: Int
    }

    public static func read(path: String, keep: Int = 100) -> Contents {
        var files: [String] = []
        for n in stride(from: keep, through: 1, by: -1) where Files.exists("\(path).\(n)") { files.append("\(path).\(n)") }
        files.append(path)
        var events: [StateEvent] = []
        var bad = 0
        let decoder = JSONDecoder()
        for file in files {
            guard let bytes = try? Files.read(file, limit: 256 << 20) else { continue }
            for line in bytes.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                if let event = try? decoder.decode(StateEvent.self, from: Data(line)) {
                    events.append(event)
                } else {
                    bad += 1
                }
            }
        }
        return Contents(events: events, badLines: bad)
    }
}
