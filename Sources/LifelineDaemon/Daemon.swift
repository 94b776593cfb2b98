import LifelineConfig
import LifelineCore
import LifelinePlatform
import LifelineServices
import Logging
import ServiceLifecycle

/// `lifeline daemon`: loads the config, builds the bus and runs every plugin
/// until SIGTERM or SIGINT.
public enum Daemon {
    public enum ExitCode: Int32 {
        case ok = 0
        case failure = 1
        case badConfig = 2
        case alreadyRunning = 3

        init(fatal: PluginFatalError) {
            self = ExitCode(rawValue: fatal.exitCode) ?? .failure
        }
    }

    public static func run(configPath: String?, logger: Logger) async -> ExitCode {
        let paths = Paths.fromEnvironment()
        let load: @Sendable () throws(ConfigError) -> DaemonConfig = {
            () throws(ConfigError) -> DaemonConfig in
            try ConfigLoader.load(explicitPath: configPath, paths: paths).publishingOnTheSessionBus()
        }
        let config: DaemonConfig
        do {
            config = try load()
        } catch {
            logger.critical("bad config: \(error)")
            return .badConfig
        }

        let sequence = StartingSequence.find(stateFile: paths.stateFile, logs: config.eventLogs(paths: paths))
        if sequence > 0 { logger.info("sequence numbers continue after \(sequence)") }
        let bus = Bus(clock: ContinuousClock(), debounce: config.debounce, startingSequence: sequence, logger: logger)
        // The name comes first: a second daemon stops here, before it touches the state file.
        let sessionBus = SessionBusService(control: bus, logger: logger.with(plugin: "session bus"))
        do {
            try await sessionBus.claim()
        } catch let fatal as PluginFatalError {
            logger.critical("\(fatal.message)")
            return ExitCode(fatal: fatal)
        } catch {
            logger.error("session bus: \(error)")
        }
        let services = DaemonServices(eventLog: EventLogLocation(config.eventLog(paths: paths)), sessionBus: sessionBus.object)
        let host = PluginHost(bus: bus, config: config, services: services, paths: paths, logger: logger, reload: load)
        // Started in this order and stopped in the reverse one: the plugins stop
        // first, and the state file and the bus name carry their last update.
        // A plugin or the bus name failing for good stops the others in order too.
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: StateFileService(bus: bus, paths: paths), failureTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: sessionBus, failureTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: host, failureTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let fatal as PluginFatalError {
            logger.critical("\(fatal.message)")
            bus.shutdown()
            return ExitCode(fatal: fatal)
        } catch {
            logger.critical("daemon stopped: \(error)")
            bus.shutdown()
            return .failure
        }
        bus.shutdown()
        logger.info("stopped")
        return .ok
    }
}
