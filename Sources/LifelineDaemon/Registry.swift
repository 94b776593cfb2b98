import DBusSink
import ExecMonitor
import ExecSink
import LifelineCore
import LifelinePlatform
import LogSink
import LogindMonitor
import NetlinkMonitor
import NetworkManagerMonitor
import NotifySink
import ProbeMonitor
import PrometheusSink
import TmuxSink
import TraySink

/// Every plugin kind the daemon knows, in one place (like i3status-rust's
/// `define_blocks!`, Waybar's factory), and the one place in the daemon that
/// names them.
///
/// Adding a plugin touches, and only touches:
/// 1. a folder `Plugins/Monitors/<Name>/` or `Plugins/Sinks/<Name>/` with one
///    type conforming to `Monitor` or `Sink`: its `kind`, a one-sentence
///    `summary`, a nested `Config: ConfigSection` whose every key has a default,
///    and a doc comment listing its "Config keys:";
/// 2. `Package.swift`: one `monitor(…)` or `sink(…)` line (which also makes the
///    daemon and `PluginTests` depend on it);
/// 3. this file: one import and one line in `monitors` or `sinks`;
/// 4. `packaging/man/lifeline.5`: a `kind = "<kind>"` section with every key
///    and its default (`ManPageTests` fails until it is there);
/// 5. `Tests/PluginTests/<Name>Tests.swift`, and an integration test when the
///    plugin talks to a real server, bus or device;
/// 6. `docs/design.md`'s plugin list, and the README's when users choose it.
/// The config loader, `config show`, the schema self-test and the supervisor
/// find it from here.
///
/// The daemon's own services (the state file, the name on the session bus)
/// are not plugins: `Daemon` runs them whatever the config lists.
public enum Registry {
    public static let monitors: [any Monitor.Type] = [
        ExecMonitor.self,
        NetlinkMonitor.self,
        ProbeMonitor.self,
        NetworkManagerMonitor.self,
        LogindMonitor.self,
    ]

    public static let sinks: [any Sink.Type] = [
        LogSink.self,
        NotifySink.self,
        DBusSink.self,
        TmuxSink.self,
        PrometheusSink.self,
        ExecSink.self,
        TraySink.self,
    ]

    /// The event log a configured `log` sink writes, with how many rotated files it keeps.
    static func eventLog(written plugin: ConfiguredPlugin, paths: Paths) -> (path: String, keep: Int)? {
        guard let log = plugin.config as? LogSink.Config else { return nil }
        return (log.path ?? paths.defaultLogFile, log.keep)
    }

    public static func monitor(kind: String) -> (any Monitor.Type)? { monitors.first { $0.kind == kind } }
    public static func sink(kind: String) -> (any Sink.Type)? { sinks.first { $0.kind == kind } }
}

extension DaemonConfig {
    /// The config with a `dbus` sink (defaults) added when it lists none. The
    /// daemon's session-bus object must follow the state whatever sinks the user
    /// chose: `lifeline run`, `wait-online`, `check` and GLib applications (the
    /// GIO module) read it, and the name it answers under is held anyway. A
    /// `[[sink]] kind = "dbus"` entry tunes it.
    public func publishingOnTheSessionBus() -> DaemonConfig {
        guard !sinks.contains(where: { $0.kind == DBusSink.kind }) else { return self }
        var copy = self
        copy.sinks.append(.sink(DBusSink.self, config: .defaults, index: sinks.count))
        return copy
    }
}
