@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import CEpoll
import Glibc
import LifelinePlatform
import Synchronization

/// The daemon's default executor: where every task that no actor owns runs,
/// and where `Task.sleep` waits.
///
/// Swift's own default executor on Linux is libdispatch's global queues. Once
/// a worker thread of those has run, libdispatch arms a one-second timer to
/// watch its pool for stuck workers, and it fires for as long as the process
/// lives: an idle daemon woke 60 times a minute for nothing, and `Task.sleep`
/// cost two more wake-ups of libdispatch's event thread around each timer.
///
/// This one is a fixed pool (one thread per CPU, at least two) that sleeps
/// until a job is ready, the earliest deadline comes, or a descriptor a task
/// waits for is ready (`EpollPool`). It is also the daemon's
/// `DescriptorWaiter`: a task waiting for a socket holds no thread, and the
/// reply wakes one pool thread, which goes on with the task. Jobs run
/// in the order they were enqueued, whatever their priority, so none waits
/// behind a later one; the daemon's jobs are short (blocking work has threads
/// of its own), so first come, first served is fair enough.
package final class EpollExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    private let pool: EpollPool<UnownedJob>

    /// A serial executor reference that names no executor: what the runtime's
    /// own global executor runs a job with (no actor, no executor preference),
    /// so a task may go on without a hop wherever it is not isolated.
    private static let noActor = unsafeBitCast((0, 0), to: UnownedSerialExecutor.self)

    package init(threads: Int, name: String = "lifeline-pool") throws {
        pool = try EpollPool(threads: threads, name: name) { job in
            job.runSynchronously(on: EpollExecutor.noActor)
        }
    }

    /// Makes an `EpollExecutor` the process's default executor, and returns it;
    /// nil if no thread could start and the platform's runs instead. Call it
    /// first thing in `main`, before any task exists.
    @discardableResult
    package static func install() -> EpollExecutor? {
        _createExecutors(factory: EpollExecutors.self)
        return EpollExecutors.defaultExecutor as? EpollExecutor
    }

    /// One thread per CPU, at least two, as Swift's own pool has.
    package static var defaultThreads: Int {
        max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Ends the threads once the jobs ready now have run (for tests; the
    /// daemon's executor lives as long as the process).
    package func stop() {
        pool.stop()
    }

    /// How many descriptor waits have not ended yet (for tests).
    var watchCount: Int {
        pool.watchCount
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        pool.push(UnownedJob(job))
    }

    package func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
    ) {
        let base: EpollPool<UnownedJob>.Timebase = clock is SuspendingClock ? .monotonic : .boottime
        // Deadlines on a clock of another kind run after their delay on the continuous clock.
        let nanoseconds = (delay as? Duration).map(Self.nanoseconds) ?? 0
        let now = base.now()
        let (deadline, overflow) = now.addingReportingOverflow(nanoseconds)
        pool.push(UnownedJob(job), at: overflow ? Int64.max : deadline, on: base)
    }

    package func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C
    ) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }

    /// `duration` in whole nanoseconds, rounded up (a job never runs before its
    /// time), 0 if negative, Int64.max if longer than that.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let part = (attoseconds + 999_999_999) / 1_000_000_000
        let (sum, overflow2) = whole.addingReportingOverflow(part)
        return overflow || overflow2 ? Int64.max : max(sum, 0)
    }
}

/// What `install` hands the runtime: the platform's main executor (the daemon's
/// main actor has almost nothing to do) and a `EpollExecutor` for the rest, or
/// the platform's default if no thread could be started (a process out of
/// resources: better a daemon that wakes than none).
struct EpollExecutors: ExecutorFactory {
    static let mainExecutor: any MainExecutor = PlatformExecutorFactory.mainExecutor
    static let defaultExecutor: any TaskExecutor =
        (try? EpollExecutor(threads: EpollExecutor.defaultThreads)) ?? PlatformExecutorFactory.defaultExecutor
}

extension EpollExecutor: DescriptorWaiter {
    package func wait(for fd: Int32, events: Int16, until deadline: ContinuousClock.Instant) async -> DescriptorWait {
        if Task.isCancelled { return .cancelled }
        // Ready already (a connect that completed as it was made, a reply
        // read in parts): the task goes on at once. Watched, it would wake
        // the timekeeper, another thread, for what this one can see now.
        var now = pollfd(fd: fd, events: events, revents: 0)
        if poll(&now, 1, 0) > 0 { return .ready }
        // ContinuousClock counts the time suspended, as CLOCK_BOOTTIME does.
        let left = Self.nanoseconds(ContinuousClock.now.duration(to: deadline))
        let (at, overflow) = EpollPool<UnownedJob>.Timebase.boottime.now().addingReportingOverflow(left)
        var watched: UInt32 = 0
        if events & Int16(POLLIN) != 0 { watched |= EPOLLIN.rawValue }
        if events & Int16(POLLOUT) != 0 { watched |= EPOLLOUT.rawValue }
        let state = WatchState()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let token = pool.watch(fd, events: watched, until: overflow ? .max : at, on: .boottime) {
                    continuation.resume(returning: $0)
                }
                // Cancelled while the watch was being made: `onCancel` found no
                // token to cancel, so it is cancelled here.
                if !state.started(token) { pool.cancelWatch(token) }
            }
        } onCancel: {
            if let token = state.cancel() { pool.cancelWatch(token) }
        }
    }
}

/// Where one wait stands, shared between the waiting task and its cancellation
/// handler, which may run first, on another thread.
private final class WatchState: Sendable {
    private enum Stage {
        case starting
        case watching(WatchToken)
        case cancelled
    }

    private let stage = Mutex(Stage.starting)

    /// Records the watch's token; false if the task was cancelled before.
    func started(_ token: WatchToken) -> Bool {
        stage.withLock { stage in
            if case .cancelled = stage { return false }
            stage = .watching(token)
            return true
        }
    }

    /// The watch to cancel, if it has started.
    func cancel() -> WatchToken? {
        stage.withLock { stage in
            defer { stage = .cancelled }
            if case .watching(let token) = stage { return token }
            return nil
        }
    }
}
