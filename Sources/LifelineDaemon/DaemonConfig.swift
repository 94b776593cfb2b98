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
/// Its defaults are the core's (`DebounceSettings()`), stated there once.
struct DebounceSection: ConfigSection {
    static var defaults: Self { Self() }
    var down = ConfigDuration(DebounceSettings().down)
    var up = ConfigDuration(DebounceSettings().up)

    func validate() throws(ConfigValueError) {
        try require("down", down, in: .seconds(0)...(.seconds(3600)))
        try require("up", up, in: .seconds(0)...(.seconds(3600)))
    }

    var settings: DebounceSettings { DebounceSettings(down: down.duration, up: up.duration) }
}

/// One `[[monitor]]` or `[[sink]]` entry: its kind, its typed config, and how to run it.
public struct ConfiguredPlugin: Sendable {
    public enum Role: String, Sendable { case monitor, sink }

    public let role: Role
    public let kind: String
    /// "monitor #1 (exec)": how logs and errors name it.
    public let name: String
    /// The typed config, for `config show`.
    public let config: any Codable & Sendable
    /// Equal for two entries of the same kind with the same settings: a reload
    /// keeps such a plugin running untouched.
    let fingerprint: String
    let start: Start

    enum Start: Sendable {
        case monitor(remeasuresReachability: Bool, run: @Sendable (MonitorHandle, PluginContext) async throws -> Void)
        case sink(delivery: DeliveryPolicy, run: @Sendable (SinkUpdates, PluginContext) async throws -> Void)
    }

    static func monitor<M: Monitor>(_ type: M.Type, config: M.Config, index: Int) -> ConfiguredPlugin {
        ConfiguredPlugin(
            role: .monitor, kind: M.kind, name: "monitor #\(index + 1) (\(M.kind))", config: config,
            fingerprint: "monitor \(M.kind) \(String(reflecting: config))",
            start: .monitor(remeasuresReachability: M.remeasuresReachability(config)) { handle, context in
                try await M(config: config, context: context).run(handle: handle)
            })
    }

    static func sink<S: Sink>(_ type: S.Type, config: S.Config, index: Int) -> ConfiguredPlugin {
        ConfiguredPlugin(
            role: .sink, kind: S.kind, name: "sink #\(index + 1) (\(S.kind))", config: config,
            fingerprint: "sink \(S.kind) \(String(reflecting: config))",
            start: .sink(delivery: S.delivery) { updates, context in
                try await S(config: config, context: context).run(updates: updates)
            })
    }
}
