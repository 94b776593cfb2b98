import ExecMonitor
import ExecSink
import LifelineCore
import LifelineServices
import LogindMonitor
import NetlinkMonitor
import NetworkManagerMonitor
import NotifySink
import ProbeMonitor
import PrometheusSink
import TmuxSink
import TraySink

/// Every plugin kind the daemon knows, in one place (like i3status-rust's
/// `define_blocks!`, Waybar's factory), and the one place that names them.
/// Adding a plugin is one line here plus its target in Package.swift. The `log`
/// and `dbus` sinks are the daemon's own services (`LifelineServices`): they are
/// listed so that the config can tune them as sinks.
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

    public static func monitor(kind: String) -> (any Monitor.Type)? { monitors.first { $0.kind == kind } }
    public static func sink(kind: String) -> (any Sink.Type)? { sinks.first { $0.kind == kind } }
}
