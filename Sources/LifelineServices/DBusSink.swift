import LifelineCore
import LifelineDBus
import Logging
import Synchronization

/// `dbus` sink: the `org.lifeline.Lifeline1` service on the session bus.
///
/// The interface (names, properties, `StateChanged`, `Check()`, `GetStatus()`,
/// `Mute()`) is `Lifeline1` in LifelineDBus and `packaging/dbus/org.lifeline.Lifeline1.xml`.
/// Every published transition is one `StateChanged`; attribute-only updates
/// change properties but emit no `StateChanged`.
///
/// One daemon per session: the name is requested with `DO_NOT_QUEUE` when the
/// daemon starts (`prepare`, before any plugin runs). If another process owns
/// it the daemon exits 3 with "another lifeline daemon owns
/// org.lifeline.Lifeline1 (pid N)". The service lives for the whole process,
/// across config reloads and sink restarts. A session bus that goes away
/// (dbus-daemon restarted) is reconnected to with back-off, the name taken
/// again and every property announced again; the daemon keeps running.
///
/// Config keys:
/// - `check_timeout` (duration, default `"10s"`): how long `Check()` waits for
///   the probe's answer before returning the current state.
public struct DBusSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var checkTimeout = ConfigDuration.seconds(10)

        enum CodingKeys: String, CodingKey {
            case checkTimeout = "check_timeout"
        }

        public func validate() throws(ConfigValueError) {
            try require("check_timeout", checkTimeout, in: .milliseconds(1)...(.seconds(120)))
        }
    }

    public static let kind = "dbus"
    public static let summary = "Serves org.lifeline.Lifeline1 on the session bus: properties, StateChanged, Check()."
    /// Every transition becomes a `StateChanged`: subscribers see each one, in order.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 1024)

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    /// Creates the daemon's service and takes the name, so that a second daemon
    /// stops here. Without a bus the daemon goes on and `run` keeps trying (and says so).
    public static func prepare(config: Config, context: PluginContext) async throws {
        let service = ServiceDirectory.service(for: context)
        service.bind(control: context.control, checkTimeout: config.checkTimeout.duration)
        do {
            try await service.connect()
        } catch let fatal as PluginFatalError {
            throw fatal
        } catch {
            context.logger.debug("no session bus at start: \(error)")
        }
    }

    public func run(updates: SinkUpdates) async throws {
        let service = ServiceDirectory.service(for: context)
        service.bind(control: context.control, checkTimeout: config.checkTimeout.duration)
        guard service.drive() else {
            // Another `dbus` sink in the same config already drives the service.
            for await update in updates { service.publish(update) }
            return
        }
        defer { service.release() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates { service.publish(update) }
            }
            group.addTask { await service.serveChecks() }
            group.addTask { await service.relayJobRequests() }
            group.addTask { try await service.keepConnected() }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The daemon's service, found again by every `dbus` sink of that daemon
/// through the core bus they share. Keyed by that bus rather than held in a
/// process-wide slot, so two cores in one process (tests, benchmarks) get two
/// services, each on the bus its environment names.
enum ServiceDirectory {
    /// The core bus is held weakly: when it goes, so does its service.
    private struct Entry: @unchecked Sendable {
        weak var owner: AnyObject?
        let service: Lifeline1Service
    }

    private static let entries = Mutex<[Entry]>([])

    static func service(for context: PluginContext) -> Lifeline1Service {
        let owner = context.control as AnyObject
        return entries.withLock { entries in
            entries.removeAll { $0.owner == nil }
            if let found = entries.first(where: { $0.owner === owner }) { return found.service }
            let service = Lifeline1Service(logger: context.logger)
            entries.append(Entry(owner: owner, service: service))
            return service
        }
    }
}
