import LifelineCore
import Synchronization

/// A sink that remembers every update it took, for tests and benchmarks
/// (like swift-log's `InMemoryLogHandler`). It can also be told to hang.
public final class InMemorySink: Sink {
    public struct Config: Codable, Sendable {
        /// Never take an update: a sink that is stuck forever.
        public var hang: Bool = false
        public init(hang: Bool = false) { self.hang = hang }
    }

    public static let kind = "memory"
    public static let summary = "Keeps every update in memory (tests)."

    private let config: Config
    private let received = Mutex<[Update]>([])

    public init(config: Config = Config(), context: PluginContext? = nil) {
        self.config = config
    }

    public convenience init(config: Config, context: PluginContext) throws {
        self.init(config: config, context: Optional(context))
    }

    public func run(updates: SinkUpdates) async throws {
        if config.hang {
            // Stuck like a sink blocked on a dead server: never reads again.
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            return
        }
        for await update in updates {
            received.withLock { $0.append(update) }
        }
    }

    public var updates: [Update] { received.withLock { $0 } }
    public var transitions: [StateEvent] { updates.filter(\.isTransition).map(\.event) }
    public var states: [ConnectivityState] { transitions.map(\.state) }
}

/// A monitor that publishes a fixed list of observations, then stays quiet.
public struct ScriptedMonitor: Monitor {
    public struct Config: Codable, Sendable {
        public var states: [ConnectivityState] = []
        public init(states: [ConnectivityState] = []) { self.states = states }
    }

    public static let kind = "scripted"
    public static let summary = "Publishes a fixed list of states (tests)."
    let config: Config

    public init(config: Config, context: PluginContext) throws { self.config = config }

    public func run(handle: MonitorHandle) async throws {
        for state in config.states {
            handle.publish(Observation(role: .reachability, state: state, reason: "scripted"))
        }
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
    }
}
