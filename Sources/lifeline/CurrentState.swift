import Glibc
import LifelineCore

/// The daemon's current state as the CLI sees it: the runtime state file,
/// trusted only while the daemon that wrote it is alive. No Foundation on this
/// path: `status` is run every second by status bars.
struct CurrentState {
    var event: StateEvent
    var pid: Int32

    static func read(paths: Paths = .fromEnvironment()) -> CurrentState? {
        read(path: paths.stateFile)
    }

    static func read(path: String) -> CurrentState? {
        guard let bytes = try? Files.read(path, limit: 64 * 1024),
              let record = StateRecord.parse(bytes)
        else { return nil }
        // A file left by a daemon that crashed describes nothing.
        guard kill(record.pid, 0) == 0 || errno == EPERM else { return nil }
        return CurrentState(event: record.event, pid: record.pid)
    }
}
