import Glibc
import LifelineCore
import LifelineDBus
import LifelineGLib

/// `logind` monitor: suspend, resume and the login session, from
/// `org.freedesktop.login1` on the system bus. It publishes no observation;
/// it tells the core when alerts must wait, while the state goes on being
/// decided and published to every surface.
///
/// - Before the machine sleeps (`PrepareForSleep(true)`) alerts are held, the
///   log line "suspending" is written, and the delay inhibitor lock the monitor
///   keeps is released, which lets the machine sleep.
/// - After resume (`PrepareForSleep(false)`) the probe runs at once and alerts
///   wait `resume_grace` more: Wi-Fi reassociating after resume is no outage.
///   An outage still there when the grace ends is shown then. A new lock is taken.
/// - While the daemon's session is not active (locked, switched to another
///   user) alerts are held; the toast for an outage still in progress shows when
///   the session is active again. The session is `XDG_SESSION_ID`'s, else the
///   user's display session.
///
/// Without a system bus or without logind the monitor is quiet (one info line)
/// and follows logind when it appears; it costs nothing where logind is absent.
///
/// Config keys:
/// - `resume_grace` (duration, default `"10s"`): how long after resume alerts wait.
public struct LogindMonitor: Monitor {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var resumeGrace = ConfigDuration.seconds(10)

        enum CodingKeys: String, CodingKey {
            case resumeGrace = "resume_grace"
        }

        public func validate() throws(ConfigValueError) {
            try require("resume_grace", resumeGrace, in: .seconds(0)...(.seconds(600)))
        }
    }

    public static let kind = "logind"
    public static let summary = "Holds alerts while the machine sleeps, just after resume, and while the session is inactive."

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public func run(handle: MonitorHandle) async throws {
        // A monitor that starts again (after a failure) knows nothing of a hold from before.
        handle.clearAlertHold()
        defer { handle.clearAlertHold() }
        // The system bus's loop: whatever arrives from the system bus is never
        // handled on the loop that serves the daemon's session-bus interface.
        let loop = MainLoopThread.systemBus
        var pause = Duration.seconds(1)
        var saidSo = false
        while !Task.isCancelled {
            let address = SystemBus.address()
            do {
                let connection = try await SystemBus.open(address)
                pause = .seconds(1)
                saidSo = false
                try await follow(connection, on: loop, handle: handle)
                handle.clearAlertHold()
                if !Task.isCancelled { context.logger.info("lost the system bus; suspend and session are not followed until it is back") }
                saidSo = true
            } catch {
                if !saidSo {
                    context.logger.info("no system bus at \(address) (\(Self.shown(error))); suspend and session are not followed until it appears")
                    saidSo = true
                }
            }
            let appeared = await SystemBus.waitBeforeRetrying(address, pause: pause)
            pause = appeared ? .seconds(1) : min(pause * 2, .seconds(30))
        }
    }

    static func shown(_ error: BusError) -> String { Follower.shown(error) }

    /// Follows logind on one connection until the connection is lost (returns)
    /// or the task is cancelled.
    private func follow(_ connection: BusConnection, on loop: MainLoopThread, handle: MonitorHandle) async throws(BusError) {
        let (events, eventSink) = AsyncStream<LogindEvent>.makeStream()
        defer { eventSink.finish() }
        // Only logind's own signals and the bus's word on who logind is are
        // queued; anyone else's are dropped here, unread.
        let logind = OwnerGate(Login1.name)
        connection.onSignal { message in
            switch logind.admit(message) {
            case .ownerChanged(let change): eventSink.yield(.logindOwner(change.newOwner))
            case .fromOwner: if let event = Login1.event(fromOwner: message) { eventSink.yield(event) }
            case .stranger: return
            }
        }
        connection.onDisconnect { eventSink.yield(.disconnected) }
        await connection.attach(to: loop)
        try await Login1.subscribe(connection)

        var follower = Follower(connection: connection, handle: handle, context: context,
                                grace: config.resumeGrace.duration)
        logind.learned(owner: try await Login1.owner(connection))
        if let owner = logind.owner {
            await follower.logindAppeared(owner)
        } else {
            context.logger.info("logind is not on the system bus; suspend and session are not followed until it appears")
        }
        for await event in events {
            if event == .disconnected { break }
            await follower.take(event)
        }
    }
}

/// What the monitor knows of logind on one connection, and what it does with
/// each signal.
private struct Follower {
    let connection: BusConnection
    let handle: MonitorHandle
    let context: PluginContext
    let grace: Duration
    /// logind's unique name; signals from anyone else are ignored.
    var owner: String?
    var lock: InhibitorLock?
    var session: String?

    init(connection: BusConnection, handle: MonitorHandle, context: PluginContext, grace: Duration) {
        self.connection = connection
        self.handle = handle
        self.context = context
        self.grace = grace
    }

    mutating func take(_ event: LogindEvent) async {
        switch event {
        case .prepareForSleep(let starting, let sender):
            guard sender == owner else { return }
            if starting {
                handle.holdAlertsForSleep()
                context.logger.info("suspending")
                lock = nil  // closing the descriptor lets the machine sleep
            } else {
                handle.resumed(grace: grace)
                handle.requestCheck()
                context.logger.info("resumed; alerts wait \(DurationText.human(grace)) for the network to come back")
                await takeLock()
            }
        case .sessionActive(let path, let active, let sender):
            guard sender == owner, path == session else { return }
            if let active {
                sessionIs(active: active)
            } else {
                await readActive()
            }
        case .logindOwner(let newOwner):
            if newOwner.isEmpty {
                guard owner != nil else { return }
                owner = nil
                lock = nil
                session = nil
                handle.clearAlertHold()
                context.logger.info("logind left the system bus; suspend and session are not followed until it is back")
            } else {
                await logindAppeared(newOwner)
            }
        case .disconnected:
            return
        }
    }

    /// A peer's error text as a log line can show it: bounded, controls escaped
    /// (a Python peer answers with a whole traceback).
    static func shown(_ error: BusError) -> String {
        BusError.shown(error.message, limit: 160)
    }

    mutating func logindAppeared(_ newOwner: String) async {
        owner = newOwner
        context.logger.info("following logind on the system bus")
        await takeLock()
        do {
            session = try await Login1.sessionPath(connection)
        } catch {
            context.logger.info("no login session found (\(Self.shown(error))); alerts do not wait for one")
            session = nil
        }
        if session != nil { await readActive() } else { handle.sessionIsActive(true) }
    }

    private mutating func takeLock() async {
        do {
            lock = try await Login1.inhibitSleep(connection)
        } catch {
            lock = nil
            context.logger.warning("cannot take a sleep inhibitor lock: \(Self.shown(error))")
        }
    }

    private func readActive() async {
        guard let session else { return }
        do {
            sessionIs(active: try await Login1.isActive(connection, session: session))
        } catch {
            context.logger.warning("cannot read whether session \(session) is active: \(Self.shown(error))")
        }
    }

    private func sessionIs(active: Bool) {
        context.logger.info(active ? "session is active" : "session is inactive; alerts wait until it is active again")
        handle.sessionIsActive(active)
    }
}
