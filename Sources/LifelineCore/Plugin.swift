import LifelinePlatform
import Logging
import Synchronization

/// Everything a plugin gets from the daemon besides its own config.
public struct PluginContext: Sendable {
    /// Names the plugin in logs: "sink log", "monitor exec #2".
    public var name: String
    public var logger: Logger
    public var paths: Paths
    /// Check now / mute, for sinks with a "Check now" button or a D-Bus method.
    public var control: any BusControl
    /// The daemon's own services that a plugin may use.
    public var services: DaemonServices

    /// Without `services` (a plugin run on its own, in a test or a benchmark): the
    /// default event log, and no session-bus object.
    public init(name: String, logger: Logger, paths: Paths, control: any BusControl, services: DaemonServices? = nil) {
        self.name = name
        self.logger = logger
        self.paths = paths
        self.control = control
        self.services = services ?? DaemonServices(eventLog: EventLogLocation(paths.defaultLogFile))
    }
}

/// What the daemon itself runs, whatever plugins the config lists, and hands
/// to the plugins that build on it.
public struct DaemonServices: Sendable {
    /// The file the history is kept in, for a plugin that reads it.
    public var eventLog: EventLogLocation
    /// The daemon's object on the session bus, which the `dbus` sink keeps
    /// current; nil where no daemon serves one (a test of one plugin).
    public var sessionBus: (any SessionBusObject)?

    public init(eventLog: EventLogLocation, sessionBus: (any SessionBusObject)? = nil) {
        self.eventLog = eventLog
        self.sessionBus = sessionBus
    }
}

/// Where the event log is: the file the config's first `log` sink writes. A
/// reload may move it, so a reader asks each time instead of keeping the path.
public final class EventLogLocation: Sendable {
    private let path: Mutex<String>

    public init(_ path: String) { self.path = Mutex(path) }

    public var current: String { path.withLock { $0 } }

    public func move(to newPath: String) { path.withLock { $0 = newPath } }
}

/// The daemon's `org.lifeline.Lifeline1` object as a sink sees it: what to
/// publish, and how long a `Check()` call waits for the probe.
public protocol SessionBusObject: AnyObject, Sendable {
    func publish(_ update: Update)
    func setCheckTimeout(_ timeout: Duration)
}

/// Something that watches the network and publishes observations.
///
/// A monitor plugin is one folder `Plugins/Monitors/<Name>/` with one type conforming to
/// this, a `static let kind` and a nested `Config` whose every key has a default,
/// so that it decodes from an empty table (the schema self-test checks it).
public protocol Monitor: Sendable {
    associatedtype Config: Codable, Sendable
    static var kind: String { get }
    /// One sentence for `lifeline config show` and the schema self-test.
    static var summary: String { get }
    init(config: Config, context: PluginContext) throws
    /// Runs until cancelled. Throwing (or returning) makes the supervisor restart
    /// it after a back-off.
    func run(handle: MonitorHandle) async throws
    /// True for a monitor that judges reachability and answers check requests
    /// (the probe): its verdict then belongs to the path it was measured on, is
    /// forgotten when the route changes, and is awaited before the state is
    /// decided, so a route that comes back is never called `online` on the
    /// strength of a probe made before it went away.
    static func remeasuresReachability(_ config: Config) -> Bool
}

extension Monitor {
    public static func remeasuresReachability(_ config: Config) -> Bool { false }
}

/// Something that carries published states to a surface.
public protocol Sink: Sendable {
    associatedtype Config: Codable, Sendable
    static var kind: String { get }
    static var summary: String { get }
    /// How updates wait for this sink; `.latest` unless it must see every transition.
    static var delivery: DeliveryPolicy { get }
    init(config: Config, context: PluginContext) throws
    /// Reads updates until the sequence ends (shutdown or reload). The first
    /// update is the current state. Throwing makes the supervisor restart it.
    func run(updates: SinkUpdates) async throws
}

extension Sink {
    public static var delivery: DeliveryPolicy { .latest }
}

/// Thrown by a plugin or a daemon service when the daemon cannot go on and
/// a restart of the plugin would not help: another daemon owns the bus name, the
/// session bus is gone. The supervisor does not restart the plugin; the daemon
/// logs `message` and exits with `exitCode` (systemd decides what comes next).
public struct PluginFatalError: Error, Sendable, CustomStringConvertible {
    public var exitCode: Int32
    public var message: String
    public init(exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }
    public var description: String { message }
}

/// A configuration error found while building a plugin from a valid-looking
/// config, e.g. an empty `command`. The config loader adds file, line and key.
public struct ConfigValueError: Error, Sendable, CustomStringConvertible {
    public var key: String
    public var message: String
    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }
    public var description: String { "\(key): \(message)" }
}
