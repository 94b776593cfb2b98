import LifelineConfig
import LifelineCore

/// A fully decoded and validated configuration, ready to run.
public struct DaemonConfig: Sendable {
    /// Where it came from: a path, or "(defaults)".
    public var source: String
    public var debounce: DebounceSettings
    public var monitors: [ConfiguredPlugin]
    public var sinks: [ConfiguredPlugin]
}

/// `[debounce]` as written in the file. Zero windows are allowed: "publish at once".
struct DebounceSection: ConfigSection {
    static var defaults: Self { Self() }
    var down = ConfigDuration.seconds(2)
    var up = ConfigDuration.seconds(1)

    func validate() throws(ConfigValueError) {
        try require("down", down, in: .seconds(0)...(.seconds(3600)))
        try require("up", up, in: .seconds(0)...(.seconds(3600)))
    }

    var settings: DebounceSettings { DebounceSettings(down: down.duration, up: up.duration) }
}

/// One `[[monitor]]` or `[[sink]]` entry: its kind, its typed config, and how to start it.
public struct ConfiguredPlugin: Sendable {
    public enum Role: String, Sendable { case monitor, sink }

    public let role: Role
    public let kind: String
    /// "monitor #1 (exec)": how logs and errors name it.
    public let name: String
    /// The typed config, for `config show`.
    public let config: any Codable & Sendable
    let service: @Sendable (Bus, PluginContext) -> PluginInstance
    /// The sink's `prepare`, run once at daemon start (nil for monitors).
    var prepare: (@Sendable (PluginContext) async throws -> Void)?

    static func monitor<M: Monitor>(_ type: M.Type, config: M.Config, index: Int) -> ConfiguredPlugin {
        let name = "monitor #\(index + 1) (\(M.kind))"
        return ConfiguredPlugin(role: .monitor, kind: M.kind, name: name, config: config) { bus, context in
            let handle = bus.makeMonitorHandle(name: name)
            return PluginInstance(name: name, context: context, release: { bus.release(handle) }) { _ in
                try await M(config: config, context: context).run(handle: handle)
            }
        }
    }

    static func sink<S: Sink>(_ type: S.Type, config: S.Config, index: Int) -> ConfiguredPlugin {
        let name = "sink #\(index + 1) (\(S.kind))"
        return ConfiguredPlugin(role: .sink, kind: S.kind, name: name, config: config, service: { bus, context in
            let mailbox = bus.attachSink(policy: S.delivery)
            return PluginInstance(name: name, context: context, release: { bus.detachSink(mailbox) }) { attempt in
                // A restarted sink starts again from the state it saw last.
                if attempt > 0 { mailbox.replayLast() }
                try await S(config: config, context: context).run(updates: SinkUpdates(mailbox))
            }
        }, prepare: { context in try await S.prepare(config: config, context: context) })
    }
}

/// A plugin bound to a bus: its supervised body and what to undo when it goes.
struct PluginInstance: Sendable {
    let name: String
    let context: PluginContext
    let release: @Sendable () -> Void
    let body: @Sendable (_ attempt: Int) async throws -> Void
}
