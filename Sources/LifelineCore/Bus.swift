import Logging
import Synchronization

/// Debounce windows of SPEC §3.
public struct DebounceSettings: Sendable, Equatable {
    public var down: Duration
    public var up: Duration
    public init(down: Duration = .seconds(2), up: Duration = .seconds(1)) {
        self.down = down
        self.up = up
    }
}

/// What sinks may ask of the core: the narrow handle of STYLE 7.
public protocol BusControl: Sendable {
    /// The state published last.
    var current: StateEvent { get }
    /// Asks every monitor that can check (the probe) to check now.
    func requestCheck()
    /// Checks now, waits for a reachability result (at most `timeout`) and returns
    /// the state after it. An explicit check publishes its result without debounce.
    func check(timeout: Duration) async -> StateEvent
    /// No alerts until `duration` from now (toast "Mute for 1 hour", D-Bus `Mute`).
    func mute(for duration: Duration)
    /// The notification sink says whether a notification server is on the bus;
    /// every sink then sees it in `Update.notificationServerPresent`.
    func reportNotificationServer(present: Bool)
}

/// The core event bus: monitors publish observations, the bus decides one state
/// (`Decision`), debounces it (`Debouncer`) and posts it to every sink's mailbox.
///
/// Publishing is synchronous and never waits on a sink: the decision runs under
/// one lock and a post is an O(1) hand-off, so a sink that hangs cannot slow the
/// bus or another sink.
public final class Bus: BusControl, Sendable {
    private struct State {
        var debouncer: Debouncer<Moment>
        /// The latest observation per monitor slot and role (index slot * 2 + role).
        var inputs: [Decision.Input?] = []
        var freeSlots: [Int] = []
        var stamp: UInt64 = 0
        var verdict: Verdict?
        var current: StateEvent
        var outage: Outage?
        var outageCount: UInt64 = 0
        var mutedUntil: Int64 = 0
        var notificationServerPresent: Bool?
        var mailboxes: [Mailbox] = []
        var timer: Task<Void, Never>?
        var armedAt: Moment?
        var checkListeners: [UInt64: AsyncStream<Void>.Continuation] = [:]
        var reachabilityWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Reachability observations so far, so a check can wait for one newer than its request.
        var reachabilityCount: UInt64 = 0
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>
    private let time: TimeSource
    private let wallClock: @Sendable () -> Int64
    private let logger: Logger

    /// `startingSequence` is the last sequence number an earlier run published
    /// (from the state file or the log), so the next transition gets the one after it.
    public init<C: Clock>(
        clock: C,
        debounce: DebounceSettings = DebounceSettings(),
        startingSequence: UInt64 = 0,
        wallClock: @escaping @Sendable () -> Int64 = WallClock.micros,
        logger: Logger = Logger(label: "lifeline.bus")
    ) where C.Duration == Duration {
        self.time = TimeSource(clock)
        self.wallClock = wallClock
        self.logger = logger
        self.state = Mutex(State(
            debouncer: Debouncer(down: debounce.down, up: debounce.up),
            current: .initial(at: wallClock(), sequence: startingSequence)
        ))
    }

    public var current: StateEvent { state.withLock { $0.current } }

    public var debounce: DebounceSettings {
        get { state.withLock { DebounceSettings(down: $0.debouncer.down, up: $0.debouncer.up) } }
        set {
            state.withLock {
                $0.debouncer.down = newValue.down
                $0.debouncer.up = newValue.up
                rearm(&$0)
            }
        }
    }

    // MARK: Monitors

    /// A handle for one monitor: the only way it can reach the core.
    public func makeMonitorHandle(name: String) -> MonitorHandle {
        let slot = state.withLock { s -> Int in
            if let free = s.freeSlots.popLast() { return free }
            s.inputs.append(contentsOf: [nil, nil])
            return s.inputs.count / 2 - 1
        }
        return MonitorHandle(bus: self, slot: slot, name: name)
    }

    /// Forgets what a monitor that stopped for good (config reload) said.
    public func release(_ handle: MonitorHandle) {
        state.withLock { s in
            s.inputs[handle.slot * 2] = nil
            s.inputs[handle.slot * 2 + 1] = nil
            s.freeSlots.append(handle.slot)
            decideAndApply(&s)
        }
    }

    func publish(_ observation: Observation, slot: Int) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.stamp &+= 1
            s.inputs[slot * 2 + observation.role.rawValue] = Decision.Input(observation, stamp: s.stamp)
            decideAndApply(&s)
            guard observation.role == .reachability else { return [] }
            s.reachabilityCount += 1
            defer { s.reachabilityWaiters.removeAll() }
            return Array(s.reachabilityWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func decideAndApply(_ s: inout State) {
        guard let verdict = Decision.decide(s.inputs.lazy.compactMap { $0 }) else { return }
        s.verdict = verdict
        apply(s.debouncer.observe(verdict, at: time.now()), to: &s)
        rearm(&s)
    }

    // MARK: Sinks

    /// A new mailbox, seeded with the current state so a sink starts from it.
    public func attachSink(policy: DeliveryPolicy) -> Mailbox {
        let mailbox = Mailbox(policy: policy)
        state.withLock { s in
            mailbox.post(Self.update(for: s, isTransition: false))
            s.mailboxes.append(mailbox)
        }
        return mailbox
    }

    public func detachSink(_ mailbox: Mailbox) {
        state.withLock { s in s.mailboxes.removeAll { $0 === mailbox } }
        mailbox.close()
    }

    // MARK: Publishing

    private func apply(_ output: Debouncer<Moment>.Output, to s: inout State) {
        switch output {
        case .none:
            return
        case .attributes(let v):
            s.current.kind = v.kind
            s.current.reason = v.reason
            s.current.rttMs = v.rttMs ?? -1
            s.current.metered = v.metered
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        case .transition(let v, let heldSince):
            let heldFor = heldSince.duration(to: time.now())
            let since = wallClock() - heldFor.microseconds
            s.current = StateEvent(
                state: v.state, previous: s.current.state, since: since, interface: v.interface,
                kind: v.kind, reason: v.reason, rttMs: v.rttMs ?? -1, metered: v.metered,
                sequence: s.current.sequence + 1
            )
            trackOutage(&s)
            logger.debug("published \(v.state.rawValue) (\(v.reason))", metadata: ["sequence": "\(s.current.sequence)"])
            post(Self.update(for: s, isTransition: true), to: s.mailboxes)
        }
    }

    private func trackOutage(_ s: inout State) {
        let e = s.current
        if e.state.isDegraded {
            if var ongoing = s.outage, !ongoing.isOver {
                ongoing.worst = min(ongoing.worst, e.state)
                s.outage = ongoing
            } else {
                s.outageCount += 1
                s.outage = Outage(id: s.outageCount, since: e.since, worst: e.state)
            }
        } else if e.state == .online {
            if var ongoing = s.outage, !ongoing.isOver {
                ongoing.endedAt = e.since
                s.outage = ongoing
            } else {
                s.outage = nil
            }
        }
    }

    private static func update(for s: State, isTransition: Bool) -> Update {
        Update(event: s.current, isTransition: isTransition, outage: s.outage, mutedUntil: s.mutedUntil,
               notificationServerPresent: s.notificationServerPresent)
    }

    private func post(_ update: Update, to mailboxes: [Mailbox]) {
        for mailbox in mailboxes { mailbox.post(update) }
    }

    // MARK: Debounce timer

    /// Keeps one sleeping task for the earliest deadline. A deadline that moved
    /// later is handled when the early timer fires, finds nothing due and re-arms.
    private func rearm(_ s: inout State) {
        guard let deadline = s.debouncer.deadline else { return }
        if let armed = s.armedAt, armed <= deadline { return }
        s.timer?.cancel()
        s.armedAt = deadline
        let time = self.time
        s.timer = Task { [weak self] in
            do { try await time.sleep(deadline) } catch { return }
            self?.timerFired()
        }
    }

    private func timerFired() {
        state.withLock { s in
            s.armedAt = nil
            s.timer = nil
            apply(s.debouncer.tick(at: time.now()), to: &s)
            rearm(&s)
        }
    }

    /// Stops the debounce timer and closes every mailbox (daemon shutdown).
    public func shutdown() {
        let (mailboxes, listeners) = state.withLock { s in
            s.timer?.cancel()
            s.timer = nil
            s.armedAt = nil
            defer { s.mailboxes = []; s.checkListeners = [:] }
            return (s.mailboxes, Array(s.checkListeners.values))
        }
        for m in mailboxes { m.close() }
        for l in listeners { l.finish() }
    }

    // MARK: Checks and mute

    public func requestCheck() {
        let listeners = state.withLock { Array($0.checkListeners.values) }
        for l in listeners { l.yield() }
    }

    /// A stream of check requests for a monitor that can check (the probe).
    func checkRequests() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in
            s.nextID += 1
            s.checkListeners[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.checkListeners.removeValue(forKey: id) }
        }
        return stream
    }

    public func check(timeout: Duration) async -> StateEvent {
        let (hasChecker, seen) = state.withLock { (!$0.checkListeners.isEmpty, $0.reachabilityCount) }
        if hasChecker {
            await withTaskGroup(of: Void.self) { group in
                let time = self.time
                let deadline = time.now().advanced(by: timeout)
                group.addTask { await self.reachabilityObservation(after: seen) }
                group.addTask { try? await time.sleep(deadline) }
                requestCheck()
                await group.next()
                group.cancelAll()
            }
        }
        return state.withLock { s in
            if let verdict = s.verdict, s.debouncer.pending?.key == verdict.key {
                apply(s.debouncer.flush(at: time.now()), to: &s)
            }
            return s.current
        }
    }

    /// Returns once a reachability observation newer than the `seen`-th arrived.
    private func reachabilityObservation(after seen: UInt64) async {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let done = state.withLock { s in
                    if Task.isCancelled || s.reachabilityCount > seen { return true }
                    s.reachabilityWaiters[id] = c
                    return false
                }
                if done { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.reachabilityWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    public func reportNotificationServer(present: Bool) {
        state.withLock { s in
            guard s.notificationServerPresent != present else { return }
            s.notificationServerPresent = present
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        }
    }

    public func mute(for duration: Duration) {
        state.withLock { s in
            s.mutedUntil = wallClock() + duration.microseconds
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        }
    }
}

/// A monitor's one door into the core (STYLE 7): it can publish what it sees and
/// ask for a check; it cannot read or change the state.
public struct MonitorHandle: Sendable {
    let bus: Bus
    let slot: Int
    public let name: String

    public func publish(_ observation: Observation) {
        bus.publish(observation, slot: slot)
    }

    /// Asks monitors that can check (the probe) to do so now, e.g. after a route change.
    public func requestCheck() {
        bus.requestCheck()
    }

    /// Check requests for this monitor; call once and iterate.
    public func checkRequests() -> AsyncStream<Void> {
        bus.checkRequests()
    }
}
