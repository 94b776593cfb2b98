import LifelineConfig
import LifelineCore
import Logging
import ServiceLifecycle
import Synchronization
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
                try await runGenerations(hangups: hangups, stop: hangup)
            } onGracefulShutdown: {
                hangup.finish()
            }
            top.cancelAll()
        }
    }

    /// `stop` ends `hangups` early when a generation fails for good (a plugin
    /// threw `PluginFatalError`); the failure is then thrown to the daemon.
    private func runGenerations(hangups: AsyncStream<Void>, stop: AsyncStream<Void>.Continuation) async throws {
        let failure = FatalBox()
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
                g.addTask {
                    do {
                        try await group.run()
                    } catch {
                        // Supervised plugins restart on ordinary errors: this one ends the daemon.
                        failure.value.withLock { $0 = (error as? PluginFatalError) ?? PluginFatalError(exitCode: 1, "\(error)") }
                        stop.finish()
                        throw error
                    }
                }
                // Wait for a reload that yields a valid config, for shutdown, or for a fatal failure.
                while true {
                    guard await signals.next() != nil else {
                        if let fatal = failure.value.withLock({ $0 }) { throw fatal }
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

/// The error that ended a generation, handed from its task to the host loop.
private final class FatalBox: Sendable {
    let value = Mutex<PluginFatalError?>(nil)
}

extension Logger {
    func with(plugin: String) -> Logger {
        var copy = self
        copy[metadataKey: "plugin"] = "\(plugin)"
        return copy
    }
}
