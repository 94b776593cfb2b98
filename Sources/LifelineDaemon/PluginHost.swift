import LifelineConfig
import LifelineCore
import LifelinePlatform
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Runs the configured monitors and sinks, each supervised in a task of its
/// own, until the daemon stops.
///
/// SIGHUP reloads the config all or nothing (a bad new config is reported and
/// the running one kept), then changes only what changed:
/// - a plugin whose kind and settings are unchanged keeps running, untouched
///   (an outage's toast stays up, nothing is re-sent);
/// - a sink whose settings changed hands its place to its successor in one step,
///   so every update reaches exactly one of them, and the successor starts once
///   the old one has written what it had (the log stays in order);
/// - new monitors start before the ones they replace stop.
/// The bus, and so the published state and its sequence, lives across reloads.
final class PluginHost: Service {
    private let bus: Bus
    private let paths: Paths
    private let logger: Logger
    private let initial: DaemonConfig
    /// The daemon's own services, handed to every plugin in its context.
    private let services: DaemonServices
    private let reload: @Sendable () throws(ConfigError) -> DaemonConfig

    init(bus: Bus, config: DaemonConfig, services: DaemonServices, paths: Paths, logger: Logger,
         reload: @escaping @Sendable () throws(ConfigError) -> DaemonConfig) {
        self.bus = bus
        self.initial = config
        self.services = services
        self.paths = paths
        self.logger = logger
        self.reload = reload
    }

    func run() async throws {
        let (hangups, hangup) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let fatal = FatalBox()
        let plugins = RunningPlugins(bus: bus, paths: paths, services: services, logger: logger) { error in
            // A plugin that cannot go on ends the daemon: stop waiting for hang-ups.
            fatal.value.withLock { $0 = $0 ?? error }
            hangup.finish()
        }
        try await withThrowingDiscardingTaskGroup { top in
            top.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup) { hangup.yield() }
            }
            await withGracefulShutdownHandler {
                logger.info("running \(initial.monitors.count) monitors and \(initial.sinks.count) sinks from \(initial.source)")
                await plugins.reconcile(with: initial.monitors + initial.sinks)
                for await _ in hangups {
                    do {
                        let config = try await Self.load(reload)
                        logger.info("SIGHUP: reloaded \(config.source)")
                        bus.debounce = config.debounce
                        // Readers of the history follow a log that moved.
                        services.eventLog.move(to: config.eventLog(paths: paths))
                        await plugins.reconcile(with: config.monitors + config.sinks)
                    } catch {
                        logger.error("SIGHUP: keeping the running config: \(error)")
                    }
                }
                await plugins.stopAll()
            } onGracefulShutdown: {
                hangup.finish()
            }
            top.cancelAll()
        }
        if let error = fatal.value.withLock({ $0 }) { throw error }
    }

    /// Reads the config again on a thread of its own: the parse runs in a child
    /// process that may take seconds (a crashing parser is bisected with more
    /// children), and the pool's few threads run the debounce timer and every
    /// sink meanwhile.
    static func load(_ reload: @escaping @Sendable () throws(ConfigError) -> DaemonConfig) async throws(ConfigError) -> DaemonConfig {
        try await Blocking.run(reload)
    }
}

/// The plugins running now; used by the host's one task only.
private final class RunningPlugins {
    struct Running {
        let plugin: ConfiguredPlugin
        let task: Task<Void, Never>
        let backingOff: Supervised.BackingOff
        /// The sink's mailbox, or the monitor's handle.
        let mailbox: Mailbox?
        let handle: MonitorHandle?
    }

    private let bus: Bus
    private let paths: Paths
    private let services: DaemonServices
    private let logger: Logger
    private let onFatal: @Sendable (PluginFatalError) -> Void
    private var running: [Running] = []

    init(bus: Bus, paths: Paths, services: DaemonServices, logger: Logger,
         onFatal: @escaping @Sendable (PluginFatalError) -> Void) {
        self.bus = bus
        self.paths = paths
        self.services = services
        self.logger = logger
        self.onFatal = onFatal
    }

    /// Makes the running plugins those of `wanted`, keeping every one that did not change.
    func reconcile(with wanted: [ConfiguredPlugin]) async {
        var leaving = running
        var next: [Running] = []
        var starting: [ConfiguredPlugin] = []
        for plugin in wanted {
            if let i = leaving.firstIndex(where: { $0.plugin.fingerprint == plugin.fingerprint }) {
                next.append(leaving.remove(at: i))
            } else {
                starting.append(plugin)
            }
        }
        for plugin in starting {
            guard case .sink(let delivery, let run) = plugin.start else { continue }
            let predecessor = leaving.firstIndex { $0.plugin.role == .sink && $0.plugin.kind == plugin.kind }
                .map { leaving.remove(at: $0) }
            next.append(startSink(plugin, delivery: delivery, run: run, replacing: predecessor))
        }
        for plugin in starting {
            guard case .monitor(let remeasures, let run) = plugin.start else { continue }
            next.append(startMonitor(plugin, remeasures: remeasures, run: run))
        }
        running = next
        await stop(leaving)
    }

    /// Every plugin is asked to stop at once, and the stop takes at most
    /// `drainLimit` however many hang: waiting for each in turn would make a
    /// stop take that limit times the number that hang. The monitors' words
    /// end first (what they say from now on is not heard), so the update that
    /// says the daemon stops is the last one each sink writes.
    func stopAll() async {
        let all = running
        running = []
        for p in all {
            guard let handle = p.handle else { continue }
            p.task.cancel()
            bus.release(handle)
        }
        bus.announceStop()
        await stop(all)
    }

    /// Asks `plugins` to stop, then waits for all of them together, up to one
    /// `drainLimit`; each that did not stop by then is named in the log.
    private func stop(_ plugins: [Running]) async {
        for p in plugins {
            if let mailbox = p.mailbox {
                // A sink drains what reached it; one waiting out a back-off has nothing to drain.
                bus.detachSink(mailbox)
                if p.backingOff.now { p.task.cancel() }
            } else {
                p.task.cancel()
            }
        }
        let deadline = ContinuousClock.now + drainLimit
        let stopped = await withTaskGroup(of: (Int, Bool).self) { group in
            for (i, task) in plugins.map(\.task).enumerated() {
                group.addTask { (i, await wait(for: task, until: deadline)) }
            }
            var stopped = [Bool](repeating: true, count: plugins.count)
            for await (i, ended) in group { stopped[i] = ended }
            return stopped
        }
        for (p, ended) in zip(plugins, stopped) {
            if !ended {
                // Its slot is released all the same: whatever it still says is dropped.
                logger.warning("\(p.plugin.name) did not stop within \(DurationText.format(drainLimit)); it is no longer heard")
                p.task.cancel()
            }
            if let handle = p.handle { bus.release(handle) }
        }
    }

    private func context(for plugin: ConfiguredPlugin) -> PluginContext {
        PluginContext(name: plugin.name, logger: logger.with(plugin: plugin.name), paths: paths, control: bus, services: services)
    }

    private func startMonitor(
        _ plugin: ConfiguredPlugin, remeasures: Bool,
        run: @escaping @Sendable (MonitorHandle, PluginContext) async throws -> Void
    ) -> Running {
        let context = context(for: plugin)
        let handle = bus.makeMonitorHandle(name: plugin.name, remeasuresReachability: remeasures)
        let (task, backingOff) = supervise(plugin, context) { _ in try await run(handle, context) }
        return Running(plugin: plugin, task: task, backingOff: backingOff, mailbox: nil, handle: handle)
    }

    private func startSink(
        _ plugin: ConfiguredPlugin, delivery: DeliveryPolicy,
        run: @escaping @Sendable (SinkUpdates, PluginContext) async throws -> Void,
        replacing predecessor: Running?
    ) -> Running {
        let context = context(for: plugin)
        let mailbox = bus.replaceSink(predecessor?.mailbox, policy: delivery)
        // One waiting out a back-off has nothing to drain: its successor need not wait.
        if let predecessor, predecessor.backingOff.now { predecessor.task.cancel() }
        let logger = self.logger
        let (task, backingOff) = supervise(plugin, context, after: predecessor) { attempt in
            if mailbox.isEnded { throw CancellationError() }
            // A restarted sink starts again from the update it was handling.
            if attempt > 0 { mailbox.replayLast() }
            try await run(SinkUpdates(mailbox), context)
            // Its mailbox was handed on or the daemon is stopping: done for good.
            if mailbox.isEnded { throw CancellationError() }
            logger.debug("\(plugin.name) returned")
        }
        return Running(plugin: plugin, task: task, backingOff: backingOff, mailbox: mailbox, handle: nil)
    }

    private func supervise(
        _ plugin: ConfiguredPlugin, _ context: PluginContext, after predecessor: Running? = nil,
        body: @escaping @Sendable (_ attempt: Int) async throws -> Void
    ) -> (Task<Void, Never>, Supervised.BackingOff) {
        let onFatal = self.onFatal
        let previous = predecessor?.task
        let supervised = Supervised(name: plugin.name, logger: context.logger, body: body)
        let task = Task {
            if let previous { await waitOrCancel(previous, logger: context.logger) }
            do {
                try await supervised.run()
            } catch {
                onFatal(error as? PluginFatalError ?? PluginFatalError(exitCode: 1, "\(supervised.name): \(error)"))
            }
        }
        return (task, supervised.backingOff)
    }
}

/// How long a sink that is going away may take to write what it still has.
private let drainLimit = Duration.seconds(5)

/// Waits for the sink being replaced to finish; after `drainLimit` cancels it.
private func waitOrCancel(_ previous: Task<Void, Never>, logger: Logger) async {
    guard await wait(for: previous, until: .now + drainLimit) else {
        logger.warning("the sink this one replaces did not finish; starting anyway")
        previous.cancel()
        return
    }
}

/// Waits for `task` to end, at most until `deadline`; true when it ended. A
/// task stuck in a C call that ignores cancellation cannot hold up a reload or
/// shutdown.
private func wait(for task: Task<Void, Never>, until deadline: ContinuousClock.Instant) async -> Bool {
    let once = ResumeOnce<Bool>()
    return await withCheckedContinuation { continuation in
        once.set(continuation)
        Task {
            await task.value
            once.resume(true)
        }
        Task {
            try? await Task.sleep(until: deadline)
            once.resume(false)
        }
    }
}

/// The error that ends the daemon, handed from a plugin's task to the host.
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
