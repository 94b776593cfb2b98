import LifelinePlatform
import Logging

/// Everything a plugin gets from the daemon besides its own config.
public struct PluginContext: Sendable {
    /// Names the plugin in logs: "sink log", "monitor exec #2".
    public var name: String
    public var logger: Logger
    public var paths: Paths
    /// Check now / mute, for sinks with a "Check now" button or a D-Bus method.
    public var control: any BusControl

    public init(name: String, logger: Logger, paths: Paths, control: any BusControl) {
        self.name = name
        self.logger = logger
        self.paths = paths
        self.control = control
    }
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
    /// Called once when the daemon starts, before any monitor or sink runs, for
    /// what must be settled first: the D-Bus sink claims the bus name here, so a
    /// second daemon stops (`PluginFatalError`) before touching the state file.
    /// Any other error is logged and the daemon goes on (`run` retries).
    static func prepare(config: Config, context: PluginContext) async throws
    /// The config given the event log the daemon writes (its first `log` sink's
    /// file), for a sink that reads the history from it and names no file itself:
    /// moving the log then never leaves the reader on an old file.
    static func config(_ config: Config, readingEventLog path: String) -> Config
    /// Reads updates until the sequence ends (shutdown or reload). The first
    /// update is the current state. Throwing makes the supervisor restart it.
    func run(updates: SinkUpdates) async throws
}

extension Sink {
    public static var delivery: DeliveryPolicy { .latest }
    public static func prepare(config: Config, context: PluginContext) async throws {}
    public static func config(_ config: Config, readingEventLog path: String) -> Config { config }
}

/// Thrown by a plugin (from `prepare` or `run`) when the daemon cannot go on and
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
