import LifelineCore
import Synchronization

/// Why a probe runs now.
enum ProbeCause: Sendable, Equatable {
    /// The regular interval, or the ramp while not online.
    case schedule
    /// A check request: netlink change, `Check()`, resume, route change.
    case request
    /// Packets left the primary interface but none came back for `stall`.
    case stall(String)
    /// Packets arrive again after a stall while not online.
    case resumed
    /// The default route went to another interface or came back: a probe still
    /// under way measures a path that is gone.
    case pathChanged
}

extension ProbeCause {
    /// What the counters saw: comes once per stall, so it need not be spaced.
    var isEvidence: Bool {
        switch self {
        case .stall, .resumed: true
        case .schedule, .request, .pathChanged: false
        }
    }
}

/// When to probe, as a pure state machine over `Moment`s (no clock inside):
///
/// - online: every `interval` after the last probe ended (`meteredInterval`
///   on a metered connection: each probe costs the user's data);
/// - not online: after 1 s, then 2 s, 4 s … up to `interval` (NetworkManager's
///   ramp), up to `meteredInterval` on a metered connection: sitting behind a
///   portal or on a dead uplink costs the same budget as being online;
/// - the first failure after an answer is confirmed at once, not after the
///   ramp's first second: one failure is not yet an outage, and waiting adds
///   to the time an outage takes to be known (the ramp starts after it);
/// - a trigger probes at once, but never sooner than `spacing` (1 s) after the
///   previous probe started, so a storm of triggers costs one probe per second;
/// - never two probes at once: a trigger during a probe waits for its end;
/// - a probe skipped for want of a route sent nothing: it neither counts for the
///   spacing nor schedules another; the route coming back triggers the next;
/// - a new path after one that abandoned the probe under way waits only
///   `settle` (250 ms), not `spacing`: the kernel reports a route coming back
///   as a few changes in a row, and the probe for the first must not hold
///   the probe for the last back by a second;
/// - a stall, and answers arriving after one (`resumed`), probe at once and
///   abandon a probe under way: each fires once per stall, and each makes the
///   probe under way stale (it started before the evidence).
struct ProbePlan: Sendable, Equatable {
    let interval: Duration
    let spacing: Duration
    let firstRetry: Duration
    let settle: Duration
    let meteredInterval: Duration
    /// The connection is metered: online probes come every `meteredInterval`.
    var metered = false

    private(set) var inFlight = false
    private(set) var lastStart: Moment?
    private(set) var lastEnd: Moment?
    /// Nil before the first probe.
    private(set) var online: Bool?
    private(set) var retryDelay: Duration
    /// Nil: nothing scheduled, only a trigger starts the next probe.
    private(set) var nextScheduled: Moment? = Moment(offset: .zero)
    private(set) var pending: ProbeCause?
    /// `lastStart` before the probe in flight, restored if that one is skipped.
    private var startBefore: Moment?
    /// The last probe was abandoned (by a trigger) before it had a verdict.
    private(set) var lastAbandoned = false
    /// Why the probe in flight (or the last one) runs.
    private(set) var lastCause: ProbeCause?

    /// `firstProbe`: when the first probe is due (from the start).
    init(interval: Duration, spacing: Duration = .seconds(1), firstRetry: Duration = .seconds(1), firstProbe: Duration = .zero,
         meteredInterval: Duration? = nil) {
        self.interval = interval
        self.meteredInterval = meteredInterval ?? interval
        nextScheduled = Moment(offset: firstProbe)
        self.spacing = min(spacing, interval)
        self.firstRetry = min(firstRetry, interval)
        settle = min(.milliseconds(250), self.spacing)
        retryDelay = self.firstRetry
    }

    /// Asks for a probe as soon as allowed. A stall wins over a plain request
    /// (it carries evidence the probe's verdict uses), but not over a new path
    /// (the stall was seen on the old one). Returns true when the probe under
    /// way should be abandoned: answers came back while it waits out its timeout
    /// on a connection started into the void, packets stopped coming back while
    /// it runs (the stall's own short probe concludes sooner), or the path it
    /// measures is gone, so a fresh probe will know sooner.
    mutating func trigger(_ cause: ProbeCause) -> Bool {
        switch (pending, cause) {
        case (.stall, let c) where c != .pathChanged: break
        default: pending = cause
        }
        switch cause {
        case .resumed, .pathChanged, .stall: return inFlight
        case .schedule, .request: return false
        }
    }

    /// When the next probe may start (nil while one is in flight).
    var due: Moment? {
        guard !inFlight else { return nil }
        if let pending {
            guard let lastStart, !pending.isEvidence else { return Moment(offset: .zero) }
            return lastStart.advanced(by: pending == .pathChanged && lastAbandoned ? settle : spacing)
        }
        return nextScheduled
    }

    /// Starts a probe if one is due at `now`; returns its cause.
    mutating func start(at now: Moment) -> ProbeCause? {
        guard let due, due <= now else { return nil }
        let cause = pending ?? .schedule
        pending = nil
        lastCause = cause
        inFlight = true
        startBefore = lastStart
        lastStart = now
        return cause
    }

    /// Records a probe's end. `online` nil: the probe was abandoned (a trigger
    /// cancelled it); the ramp goes on without growing.
    mutating func finish(at now: Moment, online result: Bool?) {
        inFlight = false
        lastEnd = now
        lastAbandoned = result == nil
        switch result {
        case true?:
            online = true
            retryDelay = firstRetry
            nextScheduled = now.advanced(by: metered ? meteredInterval : interval)
        case false? where online == true && lastCause?.isEvidence == false:
            // A stall's failure is already confirmed by the counters; any other
            // first failure is confirmed now.
            online = false
            nextScheduled = now
        case false?:
            online = false
            nextScheduled = now.advanced(by: retryDelay)
            retryDelay = min(retryDelay * 2, metered ? max(meteredInterval, interval) : interval)
        case nil:
            online = false
            nextScheduled = now.advanced(by: retryDelay)
        }
    }

    /// Records a probe that sent nothing (no default route): as if it never
    /// started, so the route coming back probes at once, and with nothing
    /// scheduled, so no timer wakes the daemon while there is nothing to probe.
    mutating func skip(at now: Moment) {
        inFlight = false
        lastStart = startBefore
        online = false
        nextScheduled = nil
    }
}

/// Drives a `ProbePlan` with an injected clock: sleeps until the next probe is
/// due or a trigger arrives, runs the probe, records its result, repeats.
final class ProbeScheduler: Sendable {
    /// Runs one probe and says whether it got the expected reply (nil: skipped
    /// for want of a route, or abandoned when cancelled).
    typealias Probe = @Sendable (ProbeCause) async -> Bool?

    private struct State {
        var plan: ProbePlan
        var sleeper: Task<Void, Never>?
        var running: Task<Bool?, Never>?
        /// Tasks waiting for the next probe to end (`nextProbeEnded`), by id.
        var roundWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var lastWaiter: UInt64 = 0
    }

    private let state: Mutex<State>
    let time: TimeSource

    init(clock: any Clock<Duration>, interval: Duration, firstProbeAfter: Duration = .zero, meteredInterval: Duration? = nil) {
        time = TimeSource(clock)
        state = Mutex(State(plan: ProbePlan(interval: interval, firstProbe: firstProbeAfter, meteredInterval: meteredInterval)))
    }

    /// Whether the connection is metered, for the next probe's scheduling.
    func setMetered(_ metered: Bool) {
        state.withLock { $0.plan.metered = metered }
    }

    var plan: ProbePlan { state.withLock { $0.plan } }

    func trigger(_ cause: ProbeCause) {
        let (sleeper, preempted) = state.withLock { s in
            let preempt = s.plan.trigger(cause)
            return (s.sleeper, preempt ? s.running : nil)
        }
        sleeper?.cancel()
        preempted?.cancel()
    }

    /// Probes until the calling task is cancelled.
    func run(probe: @escaping Probe) async {
        // Waiters for the probe that just ended, resumed where this task goes
        // to sleep (below): on the same thread, with no second one woken.
        var ended: [CheckedContinuation<Void, Never>] = []
        defer { for waiter in ended { waiter.resume() } }
        while !Task.isCancelled {
            let now = time.now()
            let started = state.withLock { $0.plan.start(at: now) }
            if let cause = started {
                // Another probe at once (a confirmation): they sample now.
                for waiter in ended { waiter.resume() }
                ended = []
                // A child task, so that a `resumed` trigger can cancel it (the
                // probe then returns nil: no verdict from an abandoned probe).
                let running = Task { await probe(cause) }
                state.withLock { $0.running = running }
                let result = await withTaskCancellationHandler {
                    await running.value
                } onCancel: {
                    running.cancel()
                }
                let end = time.now()
                let abandoned = running.isCancelled
                ended = state.withLock { s in
                    s.running = nil
                    if result == nil && !abandoned {
                        s.plan.skip(at: end)
                    } else {
                        s.plan.finish(at: end, online: result)
                    }
                    defer { s.roundWaiters = [:] }
                    return Array(s.roundWaiters.values)
                }
                continue
            }
            await sleepUntilDueOrTriggered(resumingFirst: ended)
            ended = []
        }
    }

    /// Returns once the next probe has ended (or was skipped), or at once when
    /// the calling task is cancelled. The waiter then runs on the thread that
    /// took the probe's result, right after it: no wake-up of its own.
    func nextProbeEnded() async {
        let id = state.withLock { s in
            s.lastWaiter += 1
            return s.lastWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let cancelled = state.withLock { s in
                    if Task.isCancelled { return true }
                    s.roundWaiters[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.roundWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Resumes `waiters` first: from the sleeping task, so that the pool
    /// thread that runs this one runs them next. Resumed from here, they and
    /// the sleeping task would be two jobs ready at once, and a second thread
    /// would be woken for one of them.
    private func sleepUntilDueOrTriggered(resumingFirst waiters: [CheckedContinuation<Void, Never>]) async {
        let time = self.time
        let sleeper = state.withLock { s -> Task<Void, Never>? in
            let due = s.plan.due
            if let due, due <= time.now() { return nil }
            // Nothing due: sleep until a trigger cancels the sleep.
            let task = Task {
                for waiter in waiters { waiter.resume() }
                if let due {
                    _ = try? await time.sleep(due)
                } else {
                    while (try? await time.sleep(time.now().advanced(by: .seconds(86400 * 365)))) != nil {}
                }
            }
            s.sleeper = task
            return task
        }
        guard let sleeper else {
            for waiter in waiters { waiter.resume() }
            return
        }
        await withTaskCancellationHandler {
            await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        state.withLock { s in
            if s.sleeper == sleeper { s.sleeper = nil }
        }
    }
}
