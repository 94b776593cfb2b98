import LifelineConfig
import LifelineCore
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs the configured monitors and sinks, each a supervised `Service` in one
/// `ServiceGroup` (a "generation"), and swaps the whole generation when SIGHUP
/// brings a valid new config (STYLE 4: all or nothing; a bad config is reported
/// and the running one kept). The bus, and so the published state and its
/// sequence, lives across reloads.
final class PluginHost: Service {
    private let bus: Bus
    private let paths: Paths
    private let logger: Logger
    private let initial: DaemonConfig
    private let reload: @Sendable () throws(ConfigError) -> DaemonConfig

    init(bus: Bus, config: DaemonConfig, paths: Paths, logger: Logger,
         reload: @escaping @Sendable () throws(ConfigError) -> DaemonConfig) {
        self.bus = bus
        self.initial = config
        self.paths = paths
        self.logger = logger
        self.reload = reload
    }

    func run() async throws {
        let (hangups, hangup) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        try await withThrowingDiscardingTaskGroup { top in
            top.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup) { hangup.yield() }
            }
            try await withGracefulShutdownHandler {
                try await runGenerations(hangups: hangups)
            } onGracefulShutdown: {
                hangup.finish()
            }
            top.cancelAll()
        }
    }

    private func runGenerations(hangups: AsyncStream<Void>) async throws {
        var config = initial
        var signals = hangups.makeAsyncIterator()
        var running = true
        while running {
            let instances = (config.monitors + config.sinks).map { plugin in
                plugin.service(bus, PluginContext(
                    name: plugin.name, logger: logger.with(plugin: plugin.name), paths: paths, control: bus))
            }
            let services = instances.map { instance in
                Supervised(name: instance.name, logger: instance.context.logger, body: instance.body)
            }
            let group = ServiceGroup(services: services, logger: logger)
            logger.info("running \(config.monitors.count) monitors and \(config.sinks.count) sinks from \(config.source)")
            try await withThrowingTaskGroup(of: Void.self) { g in
                g.addTask { try await group.run() }
                // Wait for a reload that yields a valid config, or for shutdown.
                while true {
                    guard await signals.next() != nil else {
                        running = false
                        break
                    }
                    do {
                        config = try reload()
                        logger.info("SIGHUP: reloaded \(config.source)")
                        break
                    } catch {
                        logger.error("SIGHUP: keeping the running config: \(error)")
                    }
                }
                await group.triggerGracefulShutdown()
                try await g.waitForAll()
            }
            for instance in instances { instance.release() }
            bus.debounce = config.debounce
        }
    }
}

extension Logger {
    func with(plugin: String) -> Logger {
        var copy = self
        copy[metadataKey: "plugin"] = "\(plugin)"
        return copy
    }
}
