import LifelineCore
import LifelineDBus
import LifelineGLib
import LifelinePlatform
import Logging
import Synchronization

/// The `org.lifeline.Lifeline1` object and its connection to the session bus.
///
/// One per daemon: the `SessionBusService` creates it and takes the name before
/// any plugin runs, and it outlives config reloads and sink restarts, so
/// clients never see the name change hands while the daemon runs. The `dbus`
/// sink publishes the states to it. Tests create their own on a private bus.
///
/// Nothing here blocks a shared thread: connecting (which waits for the bus's
/// `Hello`) runs on a thread of its own, the name request and the owner lookup
/// are asynchronous calls, and method handlers run on the loop thread and only
/// queue their answers.
public final class Lifeline1Service: SessionBusObject {
    private struct State {
        var event = StateEvent.initial(at: WallClock.micros())
        /// What the core says (µs since the epoch); past values mean "not muted".
        var mutedUntil: Int64 = 0
        /// The property values clients were last told about.
        var announced: [(String, BusValue)] = []
        var lastSignalled: UInt64 = 0
        var control: (any BusControl)?
        var checkTimeout: Duration = .seconds(10)
        /// Nil while there is no bus (not yet, or lost and not back).
        var connection: BusConnection?
        var everConnected = false
        var muteTimer: LoopSource?
        /// `Check()` calls waiting for the check in flight (or the next one).
        var checkCalls: [MethodCall] = []
        /// The jobs as the core last said (`Update.jobs`).
        var jobs: [Job] = []
    }

    private let state = Mutex(State())
    let address: @Sendable () -> String?
    private let loop: MainLoopThread
    let logger: Logger
    private let checkWanted = AsyncSignal()
    private let connectionLost = AsyncSignal()

    /// `address` names the bus each time a connection is made (the session bus
    /// by default), so a bus that comes back elsewhere is found too.
    public init(
        address: @escaping @Sendable () -> String? = { BusConnection.sessionBusAddress() },
        logger: Logger, loop: MainLoopThread = .shared
    ) {
        self.address = address
        self.logger = logger
        self.loop = loop
    }

    deinit {
        state.withLock { $0.muteTimer?.cancel() }
    }

    public func bind(control: any BusControl, checkTimeout: Duration) {
        state.withLock {
            $0.control = control
            $0.checkTimeout = checkTimeout
        }
    }

    public func setCheckTimeout(_ timeout: Duration) {
        state.withLock { $0.checkTimeout = timeout }
    }

    public var isConnected: Bool { state.withLock { $0.connection != nil } }

    var currentConnection: BusConnection? { state.withLock { $0.connection } }

    var jobControl: JobControl? { state.withLock { $0.control?.jobs } }

    // MARK: Connection

    /// Connects, serves the object and takes the name. Throws
    /// `PluginFatalError` (exit 3) when another process owns the name, and a
    /// `BusError` when there is no bus to connect to.
    public func connect() async throws {
        guard let address = address() else {
            throw BusError(name: BusError.failed, "no session bus: DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist")
        }
        let connection = try await BusConnection.open(address: address)
        // Read before attaching, while asking needs no hop to the loop.
        let uniqueName = connection.uniqueName
        await connection.attach(to: loop)
        // Served before the name is ours, so the first caller finds the object.
        connection.export(object())
        await followJobOwners(on: connection)
        connection.onDisconnect { [weak self, weak connection] in
            guard let self, let connection else { return }
            self.lost(connection)
        }
        let reply = try await connection.requestName(Lifeline1.busName, doNotQueue: true)
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            let pid = (try? await connection.processID(of: Lifeline1.busName)).map(String.init) ?? "unknown"
            throw PluginFatalError(exitCode: 3, "another lifeline daemon owns \(Lifeline1.busName) (pid \(pid))")
        }
        state.withLock { s in
            s.connection = connection
            if s.everConnected {
                // A bus that came back knows nothing: tell watchers every property again.
                s.announced = []
            } else {
                s.announced = currentProperties(s)
                s.everConnected = true
            }
            announceChanges(&s)
        }
        logger.info("serving \(Lifeline1.busName) on the session bus as \(uniqueName)")
    }

    /// Called on the loop thread while libdbus dispatches the loss.
    private func lost(_ connection: BusConnection) {
        let gone = state.withLock { s -> BusConnection? in
            guard s.connection === connection else { return nil }
            defer { s.connection = nil }
            return s.connection
        }
        guard let gone else { return }
        // Closed after this dispatch returns, not from inside it.
        loop.perform { withExtendedLifetime(gone) {} }
        // Every job's owner was on the bus that went away.
        jobControl?.clear()
        connectionLost.signal()
    }

    /// Keeps the service on the bus until cancelled: connects when it is not,
    /// and after a loss tries again with a growing pause (250 ms up to 10 s),
    /// saying so once per outage rather than once per attempt. A bus that
    /// never was (a headless session) is a notice, a lost one a warning. Only another
    /// daemon taking the name meanwhile ends it (`PluginFatalError`, exit 3).
    func keepConnected() async throws {
        var pause = Duration.milliseconds(250)
        var saidSo = false
        while !Task.isCancelled {
            if isConnected {
                await connectionLost.wait()
                if Task.isCancelled || isConnected { continue }
                logger.warning("lost the session bus connection; reconnecting in the background")
                saidSo = true
                pause = .milliseconds(250)
                continue
            }
            do {
                try await connect()
                if saidSo { logger.notice("back on the session bus") }
                saidSo = false
                pause = .milliseconds(250)
            } catch let fatal as PluginFatalError {
                throw fatal
            } catch {
                if !saidSo {
                    // Not a fault of the daemon: every other surface goes on meanwhile.
                    logger.notice("cannot reach the session bus (\(error)); trying again in the background")
                    saidSo = true
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(10))
            }
        }
    }

    // MARK: Publishing

    /// Updates the properties (`PropertiesChanged` for those that changed) and,
    /// for a transition not signalled yet, emits `StateChanged`.
    public func publish(_ update: Update) {
        state.withLock { s in
            s.event = update.event
            s.jobs = update.jobs
            if s.mutedUntil != update.mutedUntil {
                s.mutedUntil = update.mutedUntil
                armMuteTimer(&s)
            }
            announceChanges(&s)
            // A sink restarted by its supervisor gets the last transition again.
            guard update.isTransition, update.event.sequence > s.lastSignalled else { return }
            s.lastSignalled = update.event.sequence
            guard let connection = s.connection else { return }
            let e = update.event
            do {
                try connection.emit(path: Lifeline1.objectPath, interface: Lifeline1.interfaceName, member: "StateChanged",
                                    [.string(e.state.rawValue), .string(e.previous.rawValue), .vardict(Lifeline1.details(e))])
            } catch {
                logger.error("cannot emit StateChanged: \(error)")
            }
        }
    }

    private static func effectiveMute(_ mutedUntil: Int64, now: Int64 = WallClock.micros()) -> UInt64 {
        mutedUntil > now ? UInt64(mutedUntil) : 0
    }

    private func currentProperties(_ s: State) -> [(String, BusValue)] {
        Lifeline1.properties(s.event, mutedUntil: Self.effectiveMute(s.mutedUntil))
            + [(Lifeline1.jobsSignature.name, Lifeline1.jobsValue(s.jobs)),
               (Lifeline1.captivePortalSignature.name, Lifeline1.captivePortalValue(s.event.captivePortal))]
    }

    /// Emits `PropertiesChanged` for what differs from what clients were told.
    /// Called with the lock held, so announcements leave in the order the
    /// changes happened (sending only queues the message).
    private func announceChanges(_ s: inout State) {
        let now = currentProperties(s)
        let changed = now.enumerated().filter { i, p in i >= s.announced.count || s.announced[i] != p }.map(\.element)
        guard !changed.isEmpty, let connection = s.connection else { return }
        s.announced = now
        do {
            try connection.emitPropertiesChanged(path: Lifeline1.objectPath, interface: Lifeline1.interfaceName, changed: changed)
        } catch {
            logger.error("cannot emit PropertiesChanged: \(error)")
        }
    }

    /// A mute runs out without anyone publishing: a loop timer tells clients
    /// when `MutedUntil` falls back to 0.
    private func armMuteTimer(_ s: inout State) {
        s.muteTimer?.cancel()
        s.muteTimer = nil
        let remaining = s.mutedUntil - WallClock.micros()
        guard remaining > 0 else { return }
        // A millisecond late rather than early: the timer has millisecond steps.
        s.muteTimer = loop.addTimeout(.microseconds(remaining) + .milliseconds(1)) { [weak self] in
            self?.muteTimerFired()
            return false
        }
    }

    private func muteTimerFired() {
        state.withLock { s in
            s.muteTimer = nil
            if s.mutedUntil > WallClock.micros() { armMuteTimer(&s) }
            announceChanges(&s)
        }
    }

    // MARK: Serving

    private func object() -> BusObject {
        let iface = Lifeline1.interface(
            check: { [weak self] call in self?.check(call) },
            getStatus: { [weak self] call in
                guard let self else { return }
                let (event, muted) = self.state.withLock { ($0.event, Self.effectiveMute($0.mutedUntil)) }
                call.reply([.vardict(Lifeline1.status(event, mutedUntil: muted))])
            },
            mute: { [weak self] call in self?.mute(call) },
            property: { [weak self] name in
                guard let self else { return .string("") }
                let properties = self.state.withLock { self.currentProperties($0) }
                return properties.first { $0.0 == name }?.1 ?? .string("")
            },
            jobs: jobHandlers()
        )
        return BusObject(path: Lifeline1.objectPath, interfaces: [iface])
    }

    /// Queues the call for the check in flight, or asks for one: however many
    /// peers call at once, the monitors see one check and every caller gets its answer.
    private func check(_ call: MethodCall) {
        let ready = state.withLock { s -> Bool in
            guard s.control != nil else { return false }
            s.checkCalls.append(call)
            return true
        }
        guard ready else { return call.fail(BusError(name: BusError.failed, "the daemon is starting")) }
        checkWanted.signal()
    }

    /// Runs one check at a time for the calls waiting, until cancelled.
    func serveChecks() async {
        while !Task.isCancelled {
            await checkWanted.wait()
            guard !Task.isCancelled else { return }
            let (control, timeout, waiting) = state.withLock { ($0.control, $0.checkTimeout, !$0.checkCalls.isEmpty) }
            // Calls that came while the last check ran were answered by it.
            guard let control, waiting else { continue }
            let event = await control.check(timeout: timeout)
            let calls = state.withLock { s in
                defer { s.checkCalls = [] }
                return s.checkCalls
            }
            for call in calls { call.reply([.string(event.state.rawValue)]) }
        }
    }

    private func mute(_ call: MethodCall) {
        guard let seconds = call.arguments.first?.uint32 else {
            return call.fail(BusError(name: BusError.invalidArgs, "Mute takes seconds (u)"))
        }
        guard seconds <= Lifeline1.maximumMuteSeconds else {
            return call.fail(BusError(name: BusError.invalidArgs,
                                      "Mute takes at most \(Lifeline1.maximumMuteSeconds) seconds (one day), got \(seconds)"))
        }
        guard let control = state.withLock({ $0.control }) else {
            return call.fail(BusError(name: BusError.failed, "the daemon is starting"))
        }
        control.mute(for: .seconds(Int64(seconds)))
        logger.info("muted for \(DurationText.format(.seconds(Int64(seconds)))) by \(call.message.sender ?? "?")")
        call.reply()
    }
}

/// Wakes the one task waiting in `wait()`; a signal sent while nobody waits is
/// kept for the next `wait()`, and several such signals count as one.
package final class AsyncSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else {
                s.pending = true
                return nil
            }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns after a signal, or at once when the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.pending {
                        s.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    s.waiter = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { s in
                defer { s.waiter = nil }
                return s.waiter
            }?.resume()
        }
    }
}
