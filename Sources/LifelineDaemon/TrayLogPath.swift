import LogSink
import TraySink

extension DaemonConfig {
    /// The tray's "Recent outages" and "Open log" read the log this config's
    /// `log` sink writes: a tray without a `log` key of its own is given the
    /// first log sink's path, so moving the log never leaves the menu reading
    /// an old file.
    func trayReadingItsLog() -> DaemonConfig {
        guard let path = sinks.lazy.compactMap({ ($0.config as? LogSink.Config)?.path }).first else { return self }
        var config = self
        config.sinks = sinks.enumerated().map { index, plugin in
            guard var tray = plugin.config as? TraySink.Config, tray.log == nil else { return plugin }
            tray.log = path
            return .sink(TraySink.self, config: tray, index: index)
        }
        return config
    }
}
