import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform

/// The built-in sink that keeps the state file current. Not configurable: the
/// CLI depends on it.
public struct StateFileSink: Sink {
    public struct Config: Codable, Sendable {
        public init() {}
    }
    public static let kind = "state-file"
    public static let summary = "Keeps $XDG_RUNTIME_DIR/lifeline/state.json current (built in)."

    let path: String
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.path = context.paths.stateFile
        self.context = context
    }

    public func run(updates: SinkUpdates) async throws {
        // The write and the rename wait for the disk; on their own thread they
        // never hold up the cooperative pool, where the debounce timer runs.
        let disk = SerialThread(name: "lifeline-state")
        defer { disk.stop() }
        let path = self.path
        let privateRoot = context.paths.runtimeDir
        try await disk.run {
            try Files.makePrivateDirectory(Files.directory(of: path), privateRoot: privateRoot)
            try Files.requireOwnFileOrNothing(path)
        }
        defer { unlink(path) }  // no daemon, no state: `status` then says so
        for await update in updates {
            let text = StateFile.render(update)
            try await disk.run { try Files.replaceAtomically(path, with: text) }
        }
    }
}
