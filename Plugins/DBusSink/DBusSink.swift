import LifelineCore
import LifelineDBus
import LifelineGLib
import Logging
import Synchronization

/// `dbus` sink: the `org.lifeline.Lifeline1` service on the session bus (SPEC §7).
///
/// Object `/org/lifeline/Lifeline1`, interface `org.lifeline.Lifeline1`:
/// read-only properties `State` s, `Previous` s, `Since` t, `Interface` s,
/// `Kind` s, `Reason` s, `RttMs` d, `Metered` b, `Sequence` t (with
/// `PropertiesChanged`); signal `StateChanged(s state, s previous, a{sv} details)`
/// once per published transition (details: every SPEC §2 field under its §2
/// name); methods `Check() → s`, `GetStatus() → a{sv}`, `Mute(u seconds)`.
/// Attribute-only updates change properties but emit no `StateChanged`.
///
/// One daemon per session: the name is requested with `DO_NOT_QUEUE` when the
/// daemon starts (`prepare`, before any plugin runs). If another process owns
/// it the daemon exits 3 with "another lifeline daemon owns
/// org.lifeline.Lifeline1 (pid N)". The connection and the name live for the
/// whole process, across config reloads and sink restarts.
///
/// Losing the session bus is fatal on purpose: the daemon logs it and exits 1,
/// and systemd (`Restart=on-failure`) starts it again on the new bus; a fresh
/// process re-acquires the name cleanly. Nothing polls or spins meanwhile:
/// libdbus drops its watches when the socket closes.
///
/// libdbus runs inside the shared GLib loop (`MainLoopThread.shared`), so a
/// signal leaves the daemon without waiting for any blocking dispatch.
///
/// Config keys:
/// - `check_timeout` (duration, default `"10s"`): how long `Check()` waits for
///   the probe's answer before returning the current state.
public struct DBusSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var checkTimeout = ConfigDuration.seconds(10)

        enum CodingKeys: String, CodingKey {
            case checkTimeout = "check_timeout"
        }

        public func validate() throws(ConfigValueError) {
            try require("check_timeout", checkTimeout, in: .milliseconds(1)...(.seconds(120)))
        }
    }

    public static let kind = "dbus"
    public static let summary = "Serves org.lifeline.Lifeline1 on the session bus: properties, StateChanged, Check()."
    /// Every transition becomes a `StateChanged`: subscribers see each one, in order.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 1024)

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public static func prepare(config: Config, context: PluginContext) async throws {
        let service = try Lifeline1Service.claim(logger: context.logger)
        service.bind(control: context.control, checkTimeout: config.checkTimeout.duration)
    }

    public func run(updates: SinkUpdates) async throws {
        let service = try Lifeline1Service.claim(logger: context.logger)
        service.bind(control: context.control, checkTimeout: config.checkTimeout.duration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates { service.publish(update) }
            }
            group.addTask {
                await service.disconnection()
                if Task.isCancelled { return }
                throw PluginFatalError(exitCode: 1, "lost the session bus connection; exiting so that systemd restarts the daemon")
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The service object: one per process, created by the first `claim`.
final class Lifeline1Service: Sendable {
    private static let shared = Mutex<Lifeline1Service?>(nil)

    private struct State {
        var event = StateEvent.initial(at: WallClock.micros())
        var lastSignalled: UInt64 = 0
        var control: (any BusControl)?
        var checkTimeout: Duration = .seconds(10)
        var disconnected = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    let connection: BusConnection
    private let state = Mutex(State())
    private let logger: Logger

    private init(connection: BusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The process's service, connecting and taking the name on first use.
    /// Throws `PluginFatalError` (exit 3) when another process owns the name,
    /// and a `BusError` when there is no session bus (the sink retries later).
    static func claim(logger: Logger) throws -> Lifeline1Service {
        try shared.withLock { current in
            if let current, !current.isDisconnected { return current }
            if current != nil {
                throw PluginFatalError(exitCode: 1, "lost the session bus connection; exiting so that systemd restarts the daemon")
            }
            let connection = try BusConnection.connect(.session)
            connection.attach(to: .shared)
            let service = Lifeline1Service(connection: connection, logger: logger)
            // Served before the name is ours, so the first caller finds the object.
            connection.export(service.object())
            connection.onDisconnect { [weak service] in service?.disconnected() }
            let reply = try connection.requestName(Lifeline1.busName, doNotQueue: true)
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                let pid = (try? connection.processID(of: Lifeline1.busName)).map(String.init) ?? "unknown"
                throw PluginFatalError(exitCode: 3, "another lifeline daemon owns \(Lifeline1.busName) (pid \(pid))")
            }
            logger.info("serving \(Lifeline1.busName) on the session bus as \(connection.uniqueName)")
            current = service
            return service
        }
    }

    func bind(control: any BusControl, checkTimeout: Duration) {
        state.withLock {
            $0.control = control
            $0.checkTimeout = checkTimeout
        }
    }

    private var isDisconnected: Bool { state.withLock { $0.disconnected } }

    // MARK: Publishing

    /// Updates the properties (`PropertiesChanged` for those that changed) and,
    /// for a transition not signalled yet, emits `StateChanged`.
    func publish(_ update: Update) {
        let (changed, signal) = state.withLock { s -> ([(String, BusValue)], Bool) in
            let before = Lifeline1.properties(s.event)
            s.event = update.event
            let after = Lifeline1.properties(s.event)
            let changed = zip(before, after).filter { $0.1 != $1.1 }.map(\.1)
            // A sink restarted by its supervisor gets the last transition again.
            let signal = update.isTransition && update.event.sequence > s.lastSignalled
            if signal { s.lastSignalled = update.event.sequence }
            return (changed, signal)
        }
        do {
            if !changed.isEmpty {
                try connection.emitPropertiesChanged(path: Lifeline1.objectPath, interface: Lifeline1.interfaceName, changed: changed)
            }
            if signal {
                let e = update.event
                try connection.emit(path: Lifeline1.objectPath, interface: Lifeline1.interfaceName, member: "StateChanged",
                                    [.string(e.state.rawValue), .string(e.previous.rawValue), .vardict(Lifeline1.details(e))])
            }
        } catch {
            logger.error("cannot emit D-Bus signal: \(error)")
        }
    }

    // MARK: Serving

    private func object() -> BusObject {
        let iface = Lifeline1.interface(
            check: { [weak self] call in self?.check(call) },
            getStatus: { [weak self] call in
                guard let self else { return }
                call.reply([.vardict(Lifeline1.details(self.state.withLock { $0.event }))])
            },
            mute: { [weak self] call in self?.mute(call) },
            property: { [weak self] name in
                guard let self else { return .string("") }
                let e = self.state.withLock { $0.event }
                return Lifeline1.properties(e).first { $0.0 == name }?.1 ?? .string("")
            }
        )
        return BusObject(path: Lifeline1.objectPath, interfaces: [iface])
    }

    private func check(_ call: MethodCall) {
        let (control, timeout) = state.withLock { ($0.control, $0.checkTimeout) }
        guard let control else {
            return call.fail(BusError(name: BusError.failed, "the daemon is starting"))
        }
        // Answered from a task: the loop thread goes on serving while the probe runs.
        Task {
            let e = await control.check(timeout: timeout)
            call.reply([.string(e.state.rawValue)])
        }
    }

    private func mute(_ call: MethodCall) {
        guard let seconds = call.arguments.first?.uint32 else {
            return call.fail(BusError(name: BusError.invalidArgs, "Mute takes seconds (u)"))
        }
        guard let control = state.withLock({ $0.control }) else {
            return call.fail(BusError(name: BusError.failed, "the daemon is starting"))
        }
        control.mute(for: .seconds(Int64(seconds)))
        logger.info("muted for \(DurationText.format(.seconds(Int64(seconds)))) by \(call.message.sender ?? "?")")
        call.reply()
    }

    // MARK: Disconnection

    private func disconnected() {
        logger.critical("the session bus connection was lost")
        let waiters = state.withLock { s in
            s.disconnected = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Returns once the bus connection is lost (or the task is cancelled).
    func disconnection() async {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.disconnected || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
