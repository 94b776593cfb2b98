import LifelineCore
import LifelinePlatform
import Logging

/// Where the daemon and the CLI log: standard error (the journal, under systemd),
/// at the level `LIFELINE_LOG_LEVEL` names (trace, debug, info, notice, warning,
/// error, critical; info when unset or unknown).
public enum DaemonLogging {
    public static func bootstrap() -> Logger {
        let level = Environment.current["LIFELINE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "lifeline")
    }
}
