import Logging
import Synchronization

/// Debounce windows (docs/design.md, "Dedup and debounce").
public struct DebounceSettings: Sendable, Equatable {
    public var down: Duration
    public var up: Duration
    public init(down: Duration = .seconds(2), up: Duration = .seconds(1)) {
        self.down = down
        self.up = up
    }
}

/// What sinks may ask of the core: a narrow handle, so no sink can change the state.
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
    /// The job board (`lifeline run`'s commands), nil where there is none.
    var jobs: JobControl? { get }
    /// The page a captive portal intercepts (the probe's first check URL,
    /// plain http://), nil when no probe announced one.
    var signInPage: String? { get }
    /// "Open sign-in page": starts the desktop's browser on `signInPage` and
    /// checks again soon and often, so signing in is seen within seconds.
    func openSignInPage()
}

extension BusControl {
    public var jobs: JobControl? { nil }
    public var signInPage: String? { nil }
    public func openSignInPage() {}
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
        /// Per slot: the monitor measures reachability on demand (the probe), so
        /// its verdict is dropped when the path changes and awaited after.
        var remeasures: [Bool] = []
        var freeSlots: [Int] = []
        /// Per slot: the token of the handle that owns it, 0 when free. A monitor
        /// that did not stop when its slot was released (stuck in a C call, or
        /// mid-batch on a thread of its own) may still publish through its old
        /// handle; the token tells its words from those of the slot's next owner.
        var owners: [UInt64] = []
        var lastToken: UInt64 = 0
        var path = LinkPath()
        var pathListeners: [UInt64: AsyncStream<LinkPath>.Continuation] = [:]
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
        /// Per monitor slot: what it holds alerts for (sleep, resume grace, inactive session).
        var holds: [Int: AlertHold] = [:]
        var alertsHeld = false
        var holdTimer: Task<Void, Never>?
        var holdTimerAt: Moment?
        var jobs = JobBoard()
        var sleep = SleepRecord()
        var stoppingAt: Int64?
        /// Per monitor slot: the sign-in page it announced (the probe's).
        var signInPages: [Int: String] = [:]
        /// Checks requested after the sign-in page was opened, until not `portal`.
        var signInChecks: Task<Void, Never>?
        var jobListeners: [UInt64: AsyncStream<JobRequest>.Continuation] = [:]
    }

    private let state: Mutex<State>
    private let time: TimeSource
    private let wallClock: @Sendable () -> Int64
    private let logger: Logger
    /// What opens the sign-in page: the desktop's `xdg-open`, found on PATH.
    private let opener: String

    /// `startingSequence` is the last sequence number an earlier run published
    /// (from the state file or the log), so the next transition gets the one after it.
    public init<C: Clock>(
        clock: C,
        debounce: DebounceSettings = DebounceSettings(),
        startingSequence: UInt64 = 0,
        wallClock: @escaping @Sendable () -> Int64 = WallClock.micros,
        logger: Logger = Logger(label: "lifeline.bus"),
        opener: String = "xdg-open"
    ) where C.Duration == Duration {
        self.opener = opener
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
    /// `remeasuresReachability`: the monitor judges reachability and answers check
    /// requests (the probe), so its verdict is tied to the path it was measured on.
    public func makeMonitorHandle(name: String, remeasuresReachability: Bool = false) -> MonitorHandle {
        let (slot, token) = state.withLock { s -> (Int, UInt64) in
            let slot: Int
            if let free = s.freeSlots.popLast() {
                slot = free
            } else {
                s.inputs.append(contentsOf: [nil, nil])
                s.remeasures.append(false)
                s.owners.append(0)
                slot = s.remeasures.count - 1
            }
            s.lastToken += 1
            s.owners[slot] = s.lastToken
            s.remeasures[slot] = remeasuresReachability
            return (slot, s.lastToken)
        }
        return MonitorHandle(bus: self, slot: slot, token: token, name: name)
    }

    /// Forgets what a monitor that stopped for good (config reload) said. From
    /// now on the handle speaks for nothing: whatever it still publishes is
    /// dropped, even after its slot went to another monitor.
    public func release(_ handle: MonitorHandle) {
        let released = state.withLock { s -> (listeners: [AsyncStream<LinkPath>.Continuation], path: LinkPath)? in
            guard s.owners[handle.slot] == handle.token else { return nil }
            s.owners[handle.slot] = 0
            s.inputs[handle.slot * 2] = nil
            s.inputs[handle.slot * 2 + 1] = nil
            s.remeasures[handle.slot] = false
            s.freeSlots.append(handle.slot)
            s.holds[handle.slot] = nil
            s.signInPages[handle.slot] = nil
            refreshHold(&s)
            let listeners = updatePath(&s)
            decideAndApply(&s)
            return (listeners, s.path)
        }
        guard let (listeners, path) = released else { return }
        for l in listeners { l.yield(path) }
    }

    /// The current path (for a monitor about to measure on it).
    public var path: LinkPath { state.withLock { $0.path } }

    /// `measuredOn`: the path a reachability observation was measured on. One
    /// measured on a path that has changed since is dropped: it speaks for a
    /// route that is gone.
    func publish(_ observation: Observation, slot: Int, token: UInt64, measuredOn: LinkPath? = nil) {
        // What to tell outside the lock: check waiters, and the path's listeners
        // when the path changed. Empty on the hot path, so nothing is copied.
        let (waiters, newPath) = state.withLock { s -> ([CheckedContinuation<Void, Never>], (LinkPath, [AsyncStream<LinkPath>.Continuation])?) in
            guard s.owners[slot] == token else {
                logger.debug("dropped an observation from a released monitor: \(observation.reason)")
                return ([], nil)
            }
            if let measuredOn, measuredOn.generation != s.path.generation {
                logger.debug("dropped a verdict measured on an earlier path: \(observation.reason)")
                return ([], nil)
            }
            s.stamp &+= 1
            s.inputs[slot * 2 + observation.role.rawValue] = Decision.Input(observation, stamp: s.stamp)
            let listeners = observation.role == .link ? updatePath(&s) : []
            let newPath = listeners.isEmpty ? nil : (s.path, listeners)
            decideAndApply(&s)
            guard observation.role == .reachability else { return ([], newPath) }
            s.reachabilityCount += 1
            guard !s.reachabilityWaiters.isEmpty else { return ([], newPath) }
            defer { s.reachabilityWaiters.removeAll() }
            return (Array(s.reachabilityWaiters.values), newPath)
        }
        if let (path, listeners) = newPath {
            for listener in listeners { listener.yield(path) }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Recomputes the path after a link observation. When it changed, every
    /// verdict measured on the old one is forgotten (reachability is unknown until
    /// measured again) and the path's listeners are returned to be told.
    private func updatePath(_ s: inout State) -> [AsyncStream<LinkPath>.Continuation] {
        let route = Decision.route(s.inputs.lazy.compactMap { $0 })
        guard !route.sameRoute(as: s.path) else { return [] }
        s.path = LinkPath(interface: route.interface, known: route.known, generation: s.path.generation + 1)
        for slot in s.remeasures.indices where s.remeasures[slot] {
            s.inputs[slot * 2 + ObservationRole.reachability.rawValue] = nil
        }
        return Array(s.pathListeners.values)
    }

    /// Whether a monitor that measures reachability on demand has yet to speak on this path.
    private static func awaitingReachability(_ s: State) -> Bool {
        guard s.remeasures.contains(true) else { return false }
        return !s.inputs.contains { $0?.observation.role == .reachability && $0?.observation.state != .unknown }
    }

    private func decideAndApply(_ s: inout State) {
        let now = time.now()
        if let verdict = Decision.decide(slots: s.inputs, awaitingReachability: Self.awaitingReachability(s)) {
            s.verdict = verdict
            apply(s.debouncer.observe(verdict, at: now), at: now, to: &s)
        } else {
            s.verdict = nil
            apply(s.debouncer.hold(at: now), at: now, to: &s)
        }
        rearm(&s)
    }

    /// The path now and after every change, for a monitor that measures on it.
    func pathChanges() -> AsyncStream<LinkPath> {
        let (stream, continuation) = AsyncStream<LinkPath>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in
            s.nextID += 1
            s.pathListeners[s.nextID] = continuation
            continuation.yield(s.path)
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.pathListeners.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Sinks

    /// A new mailbox, seeded with the current state so a sink starts from it.
    public func attachSink(policy: DeliveryPolicy) -> Mailbox {
        replaceSink(nil, policy: policy)
    }

    /// Hands `old`'s place to a new mailbox in one step, so every update goes to
    /// exactly one of them: `old` takes no more but keeps what waits in it (its
    /// sink drains it and ends), the new one starts from the current state.
    public func replaceSink(_ old: Mailbox?, policy: DeliveryPolicy) -> Mailbox {
        let mailbox = Mailbox(policy: policy)
        state.withLock { s in
            if let old {
                s.mailboxes.removeAll { $0 === old }
                old.finish()
            }
            mailbox.post(Self.update(for: s, isTransition: false))
            s.mailboxes.append(mailbox)
        }
        return mailbox
    }

    /// Takes no more updates for `mailbox`; its sink drains what waits and ends.
    public func detachSink(_ mailbox: Mailbox) {
        state.withLock { s in s.mailboxes.removeAll { $0 === mailbox } }
        mailbox.finish()
    }

    // MARK: Publishing

    /// `now`: the moment the debouncer was asked at (one clock read per publication).
    private func apply(_ outputs: Debouncer<Moment>.Outputs, at now: Moment, to s: inout State) {
        for output in outputs { apply(output, at: now, to: &s) }
    }

    private func apply(_ output: Debouncer<Moment>.Output, at now: Moment, to s: inout State) {
        switch output {
        case .none:
            return
        case .attributes(let v):
            s.current.kind = v.kind
            s.current.reason = v.reason
            s.current.rttMs = v.rttMs ?? -1
            s.current.metered = v.metered
            s.current.connection = v.connection
            s.current.diagnosis = v.diagnosis
            s.current.families = v.families
            s.current.underneath = v.underneath
            s.current.underneathKind = v.underneathKind
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        case .transition(let v, let heldSince):
            let heldFor = heldSince.duration(to: now)
            let since = wallClock() - heldFor.microseconds
            s.current = StateEvent(
                state: v.state, previous: s.current.state, since: since, interface: v.interface,
                kind: v.kind, reason: v.reason, rttMs: v.rttMs ?? -1, metered: v.metered,
                sequence: s.current.sequence + 1,
                connection: v.connection
            )
            s.current.diagnosis = v.diagnosis
            s.current.families = v.families
            s.current.underneath = v.underneath
            s.current.underneathKind = v.underneathKind
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
        var update = Update(event: s.current, isTransition: isTransition, outage: s.outage, mutedUntil: s.mutedUntil,
                            notificationServerPresent: s.notificationServerPresent)
        update.alertsHeld = s.alertsHeld
        update.jobs = s.jobs.jobs
        update.sleep = s.sleep
        update.stoppingAt = s.stoppingAt
        return update
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
            let now = time.now()
            apply(s.debouncer.tick(at: now), at: now, to: &s)
            rearm(&s)
        }
    }

    /// Stops the debounce timer and closes every mailbox (daemon shutdown).
    public func shutdown() {
        let (mailboxes, listeners, pathListeners) = state.withLock { s in
            s.timer?.cancel()
            s.timer = nil
            s.armedAt = nil
            s.holdTimer?.cancel()
            s.holdTimer = nil
            defer { s.mailboxes = []; s.checkListeners = [:]; s.pathListeners = [:] }
            return (s.mailboxes, Array(s.checkListeners.values), Array(s.pathListeners.values))
        }
        for m in mailboxes { m.close() }
        for l in listeners { l.finish() }
        for l in pathListeners { l.finish() }
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

    /// With no route there is nothing to probe: the answer is the link's, at once.
    public func check(timeout: Duration) async -> StateEvent {
        let (hasChecker, seen) = state.withLock { s in
            (!s.checkListeners.isEmpty && !s.path.isOffline, s.reachabilityCount)
        }
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
                let now = time.now()
                apply(s.debouncer.flush(at: now), at: now, to: &s)
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

    /// The daemon is stopping cleanly: every sink gets one more update that says
    /// so (the log writes it down, so the time until the next start is known).
    public func announceStop() {
        state.withLock { s in
            s.stoppingAt = wallClock()
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        }
    }

    // MARK: Sign-in page

    public var signInPage: String? {
        state.withLock { s in s.signInPages.min { $0.key < $1.key }?.value }
    }

    func announceSignInPage(_ url: String?, slot: Int, token: UInt64) {
        state.withLock { s in
            guard s.owners[slot] == token else { return }
            s.signInPages[slot] = url
        }
    }

    /// How often, and for how long, the probe is asked to check after the
    /// sign-in page was opened: the user signs in within a minute or two, and
    /// the probe's own retries have backed off to its interval by then.
    static let signInCheckEvery = Duration.seconds(2)
    static let signInCheckFor = Duration.seconds(180)

    public func openSignInPage() {
        guard let page = signInPage else {
            logger.warning("no sign-in page to open: no probe announced one")
            return
        }
        do {
            try DesktopOpener.open(page, opener: opener)
        } catch {
            logger.warning("could not open the sign-in page \(page): \(error)")
        }
        requestCheck()
        let time = self.time
        let checks = Task { [weak self] in
            let end = time.now().advanced(by: Self.signInCheckFor)
            while !Task.isCancelled, time.now() < end {
                do { try await time.sleep(time.now().advanced(by: Self.signInCheckEvery)) } catch { return }
                guard let self, self.current.state == .portal else { return }
                self.requestCheck()
            }
        }
        let earlier = state.withLock { s in
            defer { s.signInChecks = checks }
            return s.signInChecks
        }
        earlier?.cancel()
    }

    public func mute(for duration: Duration) {
        state.withLock { s in
            s.mutedUntil = wallClock() + duration.microseconds
            post(Self.update(for: s, isTransition: false), to: s.mailboxes)
        }
    }

    // MARK: Jobs

    public var jobs: JobControl? { JobControl(bus: self) }

    /// Changes the board under the lock and posts an update when it changed.
    func changeJobs<T>(_ body: (inout JobBoard) throws(JobRefusal) -> T) throws(JobRefusal) -> T {
        try state.withLock { (s: inout State) throws(JobRefusal) -> T in
            let before = s.jobs.jobs
            let result = try body(&s.jobs)
            if s.jobs.jobs != before { post(Self.update(for: s, isTransition: false), to: s.mailboxes) }
            return result
        }
    }

    var jobBoard: JobBoard { state.withLock { $0.jobs } }

    /// Hands `action` to every listener (the D-Bus service tells the jobs' owners).
    func requestJobs(_ action: JobAction) {
        let (ids, listeners) = state.withLock { ($0.jobs.ids(for: action), Array($0.jobListeners.values)) }
        guard !ids.isEmpty else { return }
        for l in listeners { l.yield(JobRequest(action: action, ids: ids)) }
    }

    func jobRequests() -> AsyncStream<JobRequest> {
        let (stream, continuation) = AsyncStream<JobRequest>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { s in
            s.nextID += 1
            s.jobListeners[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.jobListeners.removeValue(forKey: id) }
        }
        return stream
    }
}

extension Bus {
    // MARK: Alert hold

    /// Changes what `slot`'s monitor holds alerts for.
    func changeHold(slot: Int, token: UInt64, _ change: (inout AlertHold, Moment) -> Void) {
        state.withLock { s in
            guard s.owners[slot] == token else { return }
            var hold = s.holds[slot] ?? AlertHold()
            change(&hold, time.now())
            s.holds[slot] = hold
            refreshHold(&s)
        }
    }

    /// Whether alerts are held now. When that changes every sink gets a fresh
    /// update (not a transition): a hold lifted during an outage brings its
    /// alert then, one lifted after the state came back shows nothing.
    private func refreshHold(_ s: inout State) {
        let now = time.now()
        let held = s.holds.values.contains { $0.isHeld(at: now) }
        armHoldTimer(&s, now: now)
        // The log writes sleeps down even when alerts were already held (a locked session).
        let sleepChanged = s.sleep.note(sleeping: s.holds.values.contains { $0.sleeping }, at: wallClock())
        guard held != s.alertsHeld || sleepChanged else { return }
        if held != s.alertsHeld { logger.debug(held ? "alerts held" : "alerts no longer held") }
        s.alertsHeld = held
        post(Self.update(for: s, isTransition: false), to: s.mailboxes)
    }

    /// Keeps one sleeping task for the earliest moment a hold lifts by itself
    /// (a resume grace running out), since no observation comes with it.
    private func armHoldTimer(_ s: inout State, now: Moment) {
        let deadline = s.holds.values.compactMap { $0.lifts(after: now) }.min()
        guard deadline != s.holdTimerAt else { return }
        s.holdTimer?.cancel()
        s.holdTimer = nil
        s.holdTimerAt = deadline
        guard let deadline else { return }
        let time = self.time
        s.holdTimer = Task { [weak self] in
            do { try await time.sleep(deadline) } catch { return }
            self?.holdTimerFired()
        }
    }

    private func holdTimerFired() {
        state.withLock { s in
            s.holdTimer = nil
            s.holdTimerAt = nil
            refreshHold(&s)
        }
    }
}

/// A monitor's one door into the core: it can publish what it sees, learn the
/// path the link monitors see, and ask for a check; it cannot read or change the state.
public struct MonitorHandle: Sendable {
    let bus: Bus
    let slot: Int
    /// Which ownership of the slot this handle stands for (see `Bus.release`).
    let token: UInt64
    public let name: String

    public func publish(_ observation: Observation) {
        bus.publish(observation, slot: slot, token: token)
    }

    /// Publishes a reachability verdict measured on `path`; dropped if the path
    /// has changed since (the route went away or moved to another interface).
    public func publish(_ observation: Observation, measuredOn path: LinkPath) {
        bus.publish(observation, slot: slot, token: token, measuredOn: path)
    }

    /// The path now: which interface carries the default route, if any.
    public var path: LinkPath { bus.path }

    /// Whether the connection is metered, as the monitor that knows (NetworkManager) said last.
    public var metered: Bool { bus.current.metered }

    /// The page "Open sign-in page" opens (the probe's first http:// check
    /// URL, which a captive portal intercepts); nil withdraws it.
    public func announceSignInPage(_ url: String?) {
        bus.announceSignInPage(url, slot: slot, token: token)
    }

    /// The path now and after every change; call once and iterate.
    public func pathChanges() -> AsyncStream<LinkPath> {
        bus.pathChanges()
    }

    /// Asks monitors that can check (the probe) to do so now, e.g. after a route change.
    public func requestCheck() {
        bus.requestCheck()
    }

    /// Check requests for this monitor; call once and iterate.
    public func checkRequests() -> AsyncStream<Void> {
        bus.checkRequests()
    }

    /// The machine is about to sleep: alerts wait until it has resumed and
    /// its grace has passed. The state is still decided and published.
    public func holdAlertsForSleep() {
        bus.changeHold(slot: slot, token: token) { hold, _ in hold.sleep() }
    }

    /// The machine woke up: alerts wait `grace` more, then show only what still holds.
    public func resumed(grace: Duration) {
        bus.changeHold(slot: slot, token: token) { hold, now in hold.resume(at: now, grace: grace) }
    }

    /// Whether the login session is in front; alerts wait while it is not.
    public func sessionIsActive(_ active: Bool) {
        bus.changeHold(slot: slot, token: token) { hold, _ in hold.sessionInactive = !active }
    }

    /// Nothing is known of sleep or the session (the monitor starts, or lost logind).
    public func clearAlertHold() {
        bus.changeHold(slot: slot, token: token) { hold, _ in hold = AlertHold() }
    }
}
