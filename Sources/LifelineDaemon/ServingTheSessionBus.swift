import LifelineCore
import LifelineServices

extension DaemonConfig {
    /// The config with a `dbus` sink (defaults) added when it lists none.
    ///
    /// The daemon serves `org.lifeline.Lifeline1` whatever sinks the user
    /// chose: the name is its single-instance lock (a second daemon exits 3),
    /// what systemd waits for before it counts the unit as started
    /// (`Type=dbus`, `BusName=`), and how `lifeline check` and `Mute` reach it.
    /// A `[[sink]] kind = "dbus"` entry only tunes it.
    public func servingTheSessionBus() -> DaemonConfig {
        guard !sinks.contains(where: { $0.kind == DBusSink.kind }) else { return self }
        var copy = self
        copy.sinks.append(.sink(DBusSink.self, config: .defaults, index: sinks.count))
        return copy
    }
}
