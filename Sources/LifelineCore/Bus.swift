import LifelinePlatform
import Logging
import Synchronization

/// The core event bus: monitors publish observations, the bus decides one state
/// (`StatePipeline`) and posts it to every sink's mailbox (`FanOut`).
///
/// Publishing is synchronous and never waits on a sink: the decision runs under
/// one lock and a post is a hand-off that never waits, so a sink that hangs cannot slow the
/// bus or another sink. The bus holds the parts under that lock, runs the two
/// timers (the debounce windows, the end of a resume grace) and tells the
/// listeners outside it.
public final class Bus: BusControl, Sendable {
    private struct State {
        var pipeline: StatePipeline
        var fanOut = FanOut()
        var holds = AlertHolds()
        var jobs = JobBoard()
        var notices = SinkNotices()
        var debounceTimer = Alarm()
        var holdTimer = Alarm()
        var pathListeners = Listeners<LinkPath>()
        var checkListeners = Listeners<Void>()
        var jobListeners = Listeners<JobRequest>()
        var reachabilityWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var lastWaiterID: UInt64 = 0
        /// Reachability observations so far, so a check can wait for one newer than its request.
        var reachabilityCount: UInt64 = 0
        /// Per monitor slot: the sign-in page it announced (the probe's).
        var signInPages: [Int: String] = [:]
        /// Checks requested after the sign-in page was opened, until not `portal`.
        var signInChecks: Task<Void, Never>?

        /// The state published last, as an update that is no transition.
        var currentUpdate: Update { update(isTransition: false) }

        /// The state published last, as an update.
        func update(isTransition: Bool) -> Update {
            notices.update(pipeline.current, outage: pipeline.outage, isTransition: isTransition, holds: holds, jobs: jobs)
        }

        func post(_ posts: StatePipeline.Posts) {
            switch posts {
            case .nothing:
                return
            case .current(let isTransition):
                fanOut.post(update(isTransition: isTransition))
            case .earlierThenCurrent(let earlier, let isTransition):
                fanOut.post(notices.update(
                    earlier.event, outage: earlier.outage, isTransition: earlier.isTransition, holds: holds, jobs: jobs
                ))
                fanOut.post(update(isTransition: isTransition))
            }
        }
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
        self.state = Mutex(State(pipeline: StatePipeline(
            debounce: debounce, current: .initial(at: wallClock(), sequence: startingSequence)
        )))
    }

    public var current: StateEvent { state.withLock { $0.pipeline.current } }

    public var debounce: DebounceSettings {
        get { state.withLock { $0.pipeline.debounce } }
        set {
            state.withLock {
                $0.pipeline.debounce = newValue
                rearm(&$0, for: $0.pipeline.deadline)
            }
        }
    }

    // MARK: Monitors

    /// A handle for one monitor: the only way it can reach the core.
    /// `remeasuresReachability`: the monitor judges reachability and answers check
    /// requests (the probe), so its verdict is tied to the path it was measured on.
    public func makeMonitorHandle(name: String, remeasuresReachability: Bool = false) -> MonitorHandle {
        let slot = state.withLock { $0.pipeline.attach(remeasuresReachability: remeasuresReachability) }
        return MonitorHandle(bus: self, slot: slot, name: name)
    }

    /// Forgets what a monitor that stopped for good (config reload) said. From
    /// now on the handle speaks for nothing: whatever it still publishes is
    /// dropped, even after its slot went to another monitor.
    public func release(_ handle: MonitorHandle) {
        let released = state.withLock { s -> (listeners: [AsyncStream<LinkPath>.Continuation], path: LinkPath)? in
            guard s.pipeline.owns(handle.slot) else { return nil }
            s.holds.remove(slot: handle.slot.index)
            s.signInPages[handle.slot.index] = nil
            refreshHold(&s)
            let step = s.pipeline.release(handle.slot, at: time.now(), wallClock: wallClock)
            s.post(step.posts)
            rearm(&s, for: step.deadline)
            return (step.pathChanged ? s.pathListeners.all : [], s.pipeline.path)
        }
        guard let (listeners, path) = released else { return }
        for l in listeners { l.yield(path) }
    }

    /// The current path (for a monitor about to measure on it).
    public var path: LinkPath { state.withLock { $0.pipeline.path } }

    /// `measuredOn`: the path a reachability observation was measured on. One
    /// measured on a path that has changed since is dropped: it speaks for a
    /// route that is gone.
    func publish(_ observation: Observation, slot: StatePipeline.Slot, measuredOn: LinkPath? = nil) {
        // What to tell outside the lock: check waiters, and the path's listeners
        // when the path changed. Empty on the hot path, so nothing is copied.
        var wantsCheck = false
        let (waiters, newPath) = state.withLock { s -> ([CheckedContinuation<Void, Never>], (LinkPath, [AsyncStream<LinkPath>.Continuation])?) in
            let step = s.pipeline.publish(observation, from: slot, measuredOn: measuredOn, at: time.now(), wallClock: wallClock)
            switch step.dropped {
            case .released?:
                logger.debug("dropped an observation from a released monitor: \(observation.reason)")
                return ([], nil)
            case .measuredOnEarlierPath?:
                logger.debug("dropped a verdict measured on an earlier path: \(observation.reason)")
                return ([], nil)
            case nil:
                break
            }
            let newPath: (LinkPath, [AsyncStream<LinkPath>.Continuation])? =
                step.pathChanged ? (s.pipeline.path, s.pathListeners.all) : nil
            s.post(step.posts)
            rearm(&s, for: step.deadline)
            // A single source's verdict is no answer to a check: the measurement it asks for is.
            wantsCheck = step.wantsCheck
            guard observation.role == .reachability, !wantsCheck else { return ([], newPath) }
            s.reachabilityCount += 1
            guard !s.reachabilityWaiters.isEmpty else { return ([], newPath) }
            defer { s.reachabilityWaiters.removeAll() }
            return (Array(s.reachabilityWaiters.values), newPath)
        }
        if let (path, listeners) = newPath {
            for listener in listeners { listener.yield(path) }
        }
        for waiter in waiters { waiter.resume() }
        if wantsCheck { requestCheck() }
    }

    /// Publishes a verdict the network itself stated (its captive-portal API's
    /// `captive: true`) and, when it is the one waiting for its window, at
    /// once: the debounce guards against a flap that a measurement can show,
    /// and a network's own word is no flap (the API is asked at most once per 2 s).
    func publishStated(_ observation: Observation, slot: StatePipeline.Slot, measuredOn: LinkPath) {
        publish(observation, slot: slot, measuredOn: measuredOn)
        state.withLock { s in
            let step = s.pipeline.flush(at: time.now(), wallClock: wallClock)
            s.post(step.posts)
            rearm(&s, for: step.deadline)
        }
    }

    /// The path now and after every change, for a monitor that measures on it.
    func pathChanges() -> AsyncStream<LinkPath> {
        let (stream, continuation) = AsyncStream<LinkPath>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in
            continuation.yield(s.pipeline.path)
            return s.pathListeners.add(continuation)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.pathListeners.remove(id) }
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
        state.withLock { s in s.fanOut.replace(old, with: mailbox, current: s.currentUpdate) }
        return mailbox
    }

    /// Takes no more updates for `mailbox`; its sink drains what waits and ends.
    public func detachSink(_ mailbox: Mailbox) {
        state.withLock { s in s.fanOut.detach(mailbox) }
    }

    // MARK: Debounce timer

    /// Keeps one sleeping task for the earliest deadline. A deadline that moved
    /// later is handled when the early timer fires, finds nothing due and re-arms.
    /// `deadline`: the pipeline's, as its last step returned it.
    private func rearm(_ s: inout State, for deadline: Moment?) {
        guard let deadline else { return }
        if let armed = s.debounceTimer.deadline, armed <= deadline { return }
        s.debounceTimer.set(deadline, wake(at: deadline) { $0.timerFired() })
    }

    private func timerFired() {
        state.withLock { s in
            s.debounceTimer.rang()
            let step = s.pipeline.tick(at: time.now(), wallClock: wallClock)
            s.post(step.posts)
            rearm(&s, for: step.deadline)
        }
    }

    /// A task that calls `fired` at `deadline`, unless cancelled first or the bus is gone.
    private func wake(at deadline: Moment, _ fired: @escaping @Sendable (Bus) -> Void) -> Task<Void, Never> {
        let time = self.time
        return Task { [weak self] in
            do { try await time.sleep(deadline) } catch { return }
            if let self { fired(self) }
        }
    }

    /// Stops the timers and closes every mailbox (daemon shutdown).
    public func shutdown() {
        let (listeners, pathListeners) = state.withLock { s in
            s.debounceTimer.cancel()
            s.holdTimer.cancel()
            s.fanOut.close()
            return (s.checkListeners.removeAll(), s.pathListeners.removeAll())
        }
        for l in listeners { l.finish() }
        for l in pathListeners { l.finish() }
    }

    // MARK: Checks

    public func requestCheck() {
        let listeners = state.withLock { $0.checkListeners.all }
        for l in listeners { l.yield() }
    }

    /// A stream of check requests for a monitor that can check (the probe).
    func checkRequests() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { $0.checkListeners.add(continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.checkListeners.remove(id) }
        }
        return stream
    }

    /// With no route there is nothing to probe: the answer is the link's, at once.
    public func check(timeout: Duration) async -> StateEvent {
        let (hasChecker, seen) = state.withLock { s in
            (!s.checkListeners.isEmpty && !s.pipeline.path.isOffline, s.reachabilityCount)
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
            let step = s.pipeline.flush(at: time.now(), wallClock: wallClock)
            s.post(step.posts)
            rearm(&s, for: step.deadline)
            return s.pipeline.current
        }
    }

    /// Returns once a reachability observation newer than the `seen`-th arrived.
    private func reachabilityObservation(after seen: UInt64) async {
        let id = state.withLock { s in
            s.lastWaiterID += 1
            return s.lastWaiterID
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

    // MARK: What every update carries

    public func mute(for duration: Duration) {
        state.withLock { s in
            s.notices.mutedUntil = wallClock() + duration.microseconds
            s.fanOut.post(s.currentUpdate)
        }
    }

    public func reportNotificationServer(present: Bool) {
        state.withLock { s in
            guard s.notices.reportNotificationServer(present: present) else { return }
            s.fanOut.post(s.currentUpdate)
        }
    }

    /// How well the connection works (the probe's reading of the user's own
    /// traffic); nil when unknown. An attribute: every sink gets it as an
    /// update that is no transition.
    func reportQuality(_ quality: Quality?, slot: StatePipeline.Slot) {
        state.withLock { s in
            guard s.pipeline.owns(slot), s.notices.quality != quality else { return }
            s.notices.quality = quality
            s.fanOut.post(s.currentUpdate)
        }
    }

    /// The daemon is stopping cleanly: every sink gets one more update that says
    /// so (the log writes it down, so the time until the next start is known).
    public func announceStop() {
        state.withLock { s in
            s.notices.stoppingAt = wallClock()
            s.fanOut.post(s.currentUpdate)
        }
    }

    // MARK: Sign-in page

    /// The network's own sign-in page where its captive-portal API named one
    /// (the probe keeps only an https:// one), else the probe's check page.
    public var signInPage: String? {
        state.withLock { s in
            if let url = s.pipeline.current.captivePortal?.userPortalURL, url.lowercased().hasPrefix("https://") { return url }
            return s.signInPages.min { $0.key < $1.key }?.value
        }
    }

    func announceSignInPage(_ url: String?, slot: StatePipeline.Slot) {
        state.withLock { s in
            guard s.pipeline.owns(slot) else { return }
            s.signInPages[slot.index] = url
        }
    }

    /// When, and for how long, the probe is asked to check after the sign-in
    /// page was opened: 2 s after, then twice as long each time (2, 4, 8 … s),
    /// for 3 minutes. The user signs in within a minute or two; a sign-in
    /// seen within a few seconds needs no check every 2 s for 3 minutes
    /// (90 of them), which a metered link pays for.
    static let signInCheckFirst = Duration.seconds(2)
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
            var pause = Self.signInCheckFirst
            while !Task.isCancelled, time.now().advanced(by: pause) <= end {
                do { try await time.sleep(time.now().advanced(by: pause)) } catch { return }
                guard let self, self.current.state == .portal else { return }
                self.requestCheck()
                pause = pause * 2
            }
        }
        let earlier = state.withLock { s in
            defer { s.signInChecks = checks }
            return s.signInChecks
        }
        earlier?.cancel()
    }

    // MARK: Jobs

    public var jobs: JobControl? { JobControl(bus: self) }

    /// Changes the board under the lock and posts an update when it changed.
    func changeJobs<T>(_ body: (inout JobBoard) throws(JobRefusal) -> T) throws(JobRefusal) -> T {
        try state.withLock { (s: inout State) throws(JobRefusal) -> T in
            let before = s.jobs.jobs
            let result = try body(&s.jobs)
            if s.jobs.jobs != before { s.fanOut.post(s.currentUpdate) }
            return result
        }
    }

    var jobBoard: JobBoard { state.withLock { $0.jobs } }

    /// Hands `action` to every listener (the D-Bus service tells the jobs' owners).
    func requestJobs(_ action: JobAction) {
        let (ids, listeners) = state.withLock { ($0.jobs.ids(for: action), $0.jobListeners.all) }
        guard !ids.isEmpty else { return }
        for l in listeners { l.yield(JobRequest(action: action, ids: ids)) }
    }

    func jobRequests() -> AsyncStream<JobRequest> {
        let (stream, continuation) = AsyncStream<JobRequest>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { $0.jobListeners.add(continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.jobListeners.remove(id) }
        }
        return stream
    }

    // MARK: Alert hold

    /// Changes what `slot`'s monitor holds alerts for.
    func changeHold(slot: StatePipeline.Slot, _ change: (inout AlertHold, Moment) -> Void) {
        state.withLock { s in
            guard s.pipeline.owns(slot) else { return }
            s.holds.change(slot: slot.index, at: time.now(), change)
            refreshHold(&s)
        }
    }

    /// Whether alerts are held now. When that changes every sink gets a fresh
    /// update (not a transition): a hold lifted during an outage brings its
    /// alert then, one lifted after the state came back shows nothing.
    private func refreshHold(_ s: inout State) {
        let now = time.now()
        armHoldTimer(&s, now: now)
        let change = s.holds.refresh(at: now, wallClock: wallClock)
        if change.held { logger.debug(s.holds.held ? "alerts held" : "alerts no longer held") }
        if change.any { s.fanOut.post(s.currentUpdate) }
    }

    /// Keeps one sleeping task for the earliest moment a hold lifts by itself
    /// (a resume grace running out), since no observation comes with it.
    private func armHoldTimer(_ s: inout State, now: Moment) {
        let deadline = s.holds.nextLift(after: now)
        guard deadline != s.holdTimer.deadline else { return }
        s.holdTimer.cancel()
        guard let deadline else { return }
        s.holdTimer.set(deadline, wake(at: deadline) { $0.holdTimerFired() })
    }

    private func holdTimerFired() {
        state.withLock { s in
            s.holdTimer.rang()
            refreshHold(&s)
        }
    }
}

/// One sleeping task for one deadline: the debounce timer, the hold timer.
private struct Alarm {
    private(set) var deadline: Moment?
    private var task: Task<Void, Never>?

    /// Replaces whatever was set.
    mutating func set(_ deadline: Moment, _ task: Task<Void, Never>) {
        self.task?.cancel()
        self.deadline = deadline
        self.task = task
    }

    mutating func cancel() {
        task?.cancel()
        task = nil
        deadline = nil
    }

    /// The task ran: nothing is set any more.
    mutating func rang() {
        task = nil
        deadline = nil
    }
}
