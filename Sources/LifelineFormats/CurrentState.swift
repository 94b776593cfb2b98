import Glibc
import LifelineCore
import LifelinePlatform

/// The daemon's current state as the CLI sees it: the runtime state file,
/// trusted only while the daemon that wrote it is alive. No Foundation on this
/// path: `status` is run every second by status bars.
public struct CurrentState: Sendable {
    public var event: StateEvent
    public var pid: Int32
    /// Alerts are muted until this time (µs since the epoch); 0 when not muted.
    public var mutedUntil: Int64

    public static func read(paths: Paths = .fromEnvironment()) -> CurrentState? {
        read(path: paths.stateFile)
    }

    public static func read(path: String) -> CurrentState? {
        // Never blocks and never follows a link: when the runtime folder is
        // `/tmp/lifeline-UID`, someone else may have put a FIFO or a link there.
        guard let bytes = Files.readOwnFile(path, limit: 64 * 1024),
              let record = StateRecord.parse(bytes)
        else { return nil }
        // A file left by a daemon that crashed describes nothing, and neither does
        // one naming another user's process (kill then fails with EPERM).
        guard kill(record.pid, 0) == 0 else { return nil }
        return CurrentState(event: record.event, pid: record.pid, mutedUntil: record.mutedUntil)
    }
}

extension StatusFormat {
    /// What `status` and `check` print: one JSON object (every field, and until
    /// when alerts are muted), the user's template, or the plain line for a
    /// person, with control characters in values made visible. Only the line for
    /// a person is in the user's language (`translator`, default theirs): JSON and
    /// templates are read by programs and scripts.
    public static func output(
        _ event: StateEvent, mutedUntil: Int64 = 0, format: String?, json: Bool, now: Int64 = WallClock.micros(),
        translator: Translator? = nil
    ) -> String {
        if json { return JSONText.object(event, extra: [("muted_until", String(mutedUntil))]) }
        if let format { return render(format, event, now: now, escape: TerminalText.visible) }
        return plainLine(event, now: now, translator: translator ?? .user, escape: TerminalText.visible)
    }
}
