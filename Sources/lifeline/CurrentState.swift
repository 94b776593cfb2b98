import FoundationEssentials
import Glibc
import LifelineCore

/// The daemon's current state as the CLI sees it: the runtime state file,
/// trusted only while the daemon that wrote it is alive.
struct CurrentState {
    var event: StateEvent
    var pid: Int32

    private struct Record: Decodable {
        var pid: Int32
    }

    static func read(paths: Paths = .fromEnvironment()) -> CurrentState? {
        guard let bytes = try? Files.read(paths.stateFile, limit: 64 * 1024) else { return nil }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        guard let event = try? decoder.decode(StateEvent.self, from: data),
              let record = try? decoder.decode(Record.self, from: data)
        else { return nil }
        // A file left by a daemon that crashed describes nothing.
        guard kill(record.pid, 0) == 0 || errno == EPERM else { return nil }
        return CurrentState(event: event, pid: record.pid)
    }
}
