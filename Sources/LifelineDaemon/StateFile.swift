import Glibc
import LifelineCore

/// The runtime state file `$XDG_RUNTIME_DIR/lifeline/state.json` (SPEC §6): the
/// current state with every §2 field plus the daemon's pid, replaced atomically
/// on every change. `lifeline status` reads it when D-Bus is not there; the pid
/// tells a live daemon from a file left behind by a crash.
public enum StateFile {
    public static func render(_ update: Update, pid: Int32 = getpid()) -> String {
        JSONText.object(update.event, extra: [("pid", String(pid)), ("muted_until", String(update.mutedUntil))]) + "\n"
    }
}

/// The built-in sink that keeps the state file current. Not configurable: the
/// CLI depends on it.
struct StateFileSink: Sink {
    struct Config: Codable, Sendable {}
    static let kind = "state-file"
    static let summary = "Keeps $XDG_RUNTIME_DIR/lifeline/state.json current (built in)."

    let path: String
    let context: PluginContext

    init(config: Config, context: PluginContext) throws {
        self.path = context.paths.stateFile
        self.context = context
    }

    func run(updates: SinkUpdates) async throws {
        let folder = Files.directory(of: path)
        try Files.makeDirectories(folder)
        try Files.requirePrivateDirectory(folder)
        defer { unlink(path) }  // no daemon, no state: `status` then says so
        for await update in updates {
            try Files.replaceAtomically(path, with: StateFile.render(update))
        }
    }
}
