import LifelineCore

/// The event log's lines that are not transitions: when the machine went to
/// sleep and woke up, and when the daemon stopped cleanly. They let `history`
/// tell the time the connection was down from the time nobody was looking.
/// One flat object each, `{"mark":"sleep","since":…}`, without a `sequence`:
/// sequence numbers count published transitions only, one line each.
/// (A daemon that starts again is seen in its first transition, whose
/// `previous` is `unknown`.)
public enum LogMark: Sendable, Equatable {
    /// The machine went to sleep at this time (µs since the epoch).
    case sleep(at: Int64)
    /// It woke up at `at`, after sleeping since `asleepSince` (said again, so a
    /// sleep whose first line was lost is still known).
    case wake(at: Int64, asleepSince: Int64)
    /// The daemon stopped cleanly at this time.
    case stop(at: Int64)

    public var time: Int64 {
        switch self {
        case .sleep(let at), .wake(let at, _), .stop(let at): at
        }
    }

    /// The line as the log holds it, without its newline.
    public var line: String {
        switch self {
        case .sleep(let at): #"{"mark":"sleep","since":\#(at)}"#
        case .wake(let at, let asleepSince): #"{"mark":"wake","since":\#(at),"asleep_since":\#(asleepSince)}"#
        case .stop(let at): #"{"mark":"stop","since":\#(at)}"#
        }
    }

    /// Nil when the line is not a mark, or one with a time out of range.
    public static func parse(_ bytes: some Collection<UInt8>) -> LogMark? {
        var mark: String?, since: Int64?, asleepSince: Int64?
        let wellFormed = FlatJSON.forEachMember(Array(bytes)) { key, value in
            switch (key, value) {
            case ("mark", .string(let s)): mark = s
            case ("since", _): since = value.int64
            case ("asleep_since", _): asleepSince = value.int64
            default: break
            }
        }
        guard wellFormed, let mark, let since, StateRecord.timeRange.contains(since) else { return nil }
        switch mark {
        case "sleep": return .sleep(at: since)
        case "stop": return .stop(at: since)
        case "wake":
            guard let asleepSince, StateRecord.timeRange.contains(asleepSince), asleepSince <= since else { return nil }
            return .wake(at: since, asleepSince: asleepSince)
        default: return nil
        }
    }

    /// Whether a line is a mark of any kind (known or from a newer version), by
    /// its key alone: readers that want transitions step over it.
    static func isMark(_ bytes: [UInt8]) -> Bool {
        var found = false
        _ = FlatJSON.forEachMember(bytes) { key, _ in if key == "mark" { found = true } }
        return found
    }
}

/// What the log sink has written of the sleeps and the stop that updates
/// carry, so each goes to the log once.
public struct LogMarkWriter: Sendable {
    private var sleepsWritten: UInt64 = 0
    private var wakesWritten: UInt64 = 0
    private var stopWritten = false
    private var seeded = false

    public init() {}

    /// The marks `update` brings that are not written yet, oldest first. The
    /// first update a sink takes only sets where it starts: what came before was
    /// written by the sink it replaces.
    public mutating func marks(for update: Update) -> [LogMark] {
        let sleep = update.sleep
        guard seeded else {
            seeded = true
            sleepsWritten = sleep.count
            wakesWritten = sleep.isAsleep ? sleep.count - 1 : sleep.count
            return []
        }
        var out: [LogMark] = []
        if let began = sleep.began {
            if sleep.count > sleepsWritten {
                out.append(.sleep(at: began))
                sleepsWritten = sleep.count
            }
            if let ended = sleep.ended, sleep.count > wakesWritten {
                out.append(.wake(at: ended, asleepSince: began))
                wakesWritten = sleep.count
            }
        }
        if let at = update.stoppingAt, !stopWritten {
            out.append(.stop(at: at))
            stopWritten = true
        }
        return out
    }
}
