import LifelineCore
import LifelineDBus
import Logging
import ServiceLifecycle

/// The daemon's name and object on the session bus, run whatever sinks the
/// config lists: the name `org.lifeline.Lifeline1` is the single-instance lock
/// (a second daemon exits 3), what systemd waits for before it counts the unit
/// as started (`Type=dbus`, `BusName=`), and how `lifeline check`, `Mute` and
/// the jobs of `lifeline run` reach the daemon. The `dbus` sink keeps the
/// object's state current.
///
/// The name is taken by `claim` before any other service or plugin starts, so
/// a second daemon stops before it touches the state file. In the service
/// group it comes before the plugin host and so stops after it: the last
/// update the sinks carry still finds the object on the bus.
public final class SessionBusService: Service {
    public let object: Lifeline1Service
    private let control: any BusControl

    public init(control: any BusControl, logger: Logger, object: Lifeline1Service? = nil) {
        self.object = object ?? Lifeline1Service(logger: logger)
        self.control = control
        self.object.bind(control: control, checkTimeout: .seconds(10))
    }

    /// Takes the name. Throws `PluginFatalError` (exit 3) when another process
    /// owns it; without a session bus the daemon goes on and `run` keeps trying.
    public func claim() async throws {
        do {
            try await object.connect()
        } catch let fatal as PluginFatalError {
            throw fatal
        } catch {
            object.logger.debug("no session bus at start: \(error)")
        }
    }

    /// Keeps the name, answers checks and relays job requests until the daemon stops.
    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.object.serveChecks() }
                group.addTask { await self.object.relayJobRequests() }
                group.addTask { try await self.object.keepConnected() }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
