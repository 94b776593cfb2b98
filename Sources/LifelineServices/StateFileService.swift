import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform
import ServiceLifecycle

/// Keeps `$XDG_RUNTIME_DIR/lifeline/state.json` current, whatever the config
/// lists: `lifeline status` and the status bars read it. It takes its updates
/// from the core bus like a sink, but it is the daemon's own service: it comes
/// first in the service group and stops last, after the plugin host's final
/// update, and then removes the file (no daemon, no state).
public final class StateFileService: Service {
    private let bus: Bus
    private let path: String
    private let privateRoot: String

    public init(bus: Bus, paths: Paths) {
        self.bus = bus
        self.path = paths.stateFile
        self.privateRoot = paths.runtimeDir
    }

    public func run() async throws {
        // The write and the rename wait for the disk; on their own thread they
        // never hold up the cooperative pool, where the debounce timer runs.
        let disk = SerialThread(name: "lifeline-state")
        defer { disk.stop() }
        let path = self.path
        let privateRoot = self.privateRoot
        try await disk.run {
            try Files.makePrivateDirectory(Files.directory(of: path), privateRoot: privateRoot)
            try Files.requireOwnFileOrNothing(path)
        }
        defer { unlink(path) }
        let mailbox = bus.attachSink(policy: .latest)
        // At shutdown the mailbox ends once it has handed over what it holds.
        try await withGracefulShutdownHandler {
            for await update in SinkUpdates(mailbox) {
                let text = StateFile.render(update)
                try await disk.run { try Files.replaceAtomically(path, with: text) }
            }
        } onGracefulShutdown: {
            self.bus.detachSink(mailbox)
        }
    }
}
