import LifelineServices

extension DaemonConfig {
    /// Sinks that read the event log (the tray's "Recent outages" and "Open
    /// log") and name no file of their own are given the file the first `log`
    /// sink writes, so moving the log never leaves them reading an old file.
    func readersGivenTheEventLog() -> DaemonConfig {
        guard let path = sinks.lazy.compactMap({ ($0.config as? LogSink.Config)?.path }).first else { return self }
        var config = self
        config.sinks = sinks.map { $0.readingEventLog?(path) ?? $0 }
        return config
    }
}
