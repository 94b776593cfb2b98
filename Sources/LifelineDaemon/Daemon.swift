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
            try ConfigLoader.load(explicitPath: configPath, paths: paths).servingTheSessionBus()
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
        // Sinks settle what must come first (the D-Bus name) before anything runs.
        for sink in config.sinks {
            guard let prepare = sink.prepare else { continue }
            do {
                try await prepare(PluginContext(name: sink.name, logger: logger.with(plugin: sink.name), paths: paths, control: bus))
            } catch let fatal as PluginFatalError {
                logger.critical("\(fatal.message)")
                return ExitCode(fatal: fatal)
            } catch {
                logger.error("\(sink.name): \(error)")
            }
        }
        let stateFile = ConfiguredPlugin.sink(StateFileSink.self, config: .init(), index: -1)
        let host = PluginHost(bus: bus, config: config, builtIn: [stateFile], paths: paths, logger: logger, reload: load)
        let group = ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
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
