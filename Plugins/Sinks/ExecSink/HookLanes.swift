import Glibc
import LifelineCore
import LifelinePlatform
import Logging
import Synchronization

/// One lane per hook name: a hook runs on its own thread, one run at a time,
/// and while it runs only the newest event waits for it (a newer one replaces
/// an older one). A hook that hangs holds its own lane until its timeout and
/// nothing else: not the other hooks, not the other sinks, not the next
/// transition. No hook, no lane, no thread.
final class HookLanes: Sendable {
    struct Job: Sendable {
        var hook: Hook
        var event: StateEvent
    }

    /// How a job becomes a running process: the permission check and the spawn.
    typealias Start = @Sendable (Job) -> HookProcess?
    /// Runs a started process to its end (blocks, on the lane's thread);
    /// `stopNotice` turns readable when `stop` is called.
    typealias Finish = @Sendable (HookProcess, _ stopRequested: () -> Bool, _ stopNotice: Int32) -> Void

    private struct Lane {
        var running = false
        var pending: Job?
    }

    private struct State {
        var lanes: [String: Lane] = [:]
        var stopping = false
        var busy = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// The write end of `stopNotice`'s pipe, closed by `stop`.
        var noticeWriter: Int32 = -1
    }

    private let state = Mutex(State())
    private let start: Start
    private let finish: Finish

    /// The read end of a pipe whose write end `stop` closes: readable from
    /// then on, so a running hook's wait wakes for the stop, not a timer.
    private let stopNotice: Int32

    init(start: @escaping Start, finish: @escaping Finish) {
        self.start = start
        self.finish = finish
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            state.withLock { $0.noticeWriter = ends[1] }
        }
        stopNotice = ends[0]
    }

    deinit {
        if stopNotice >= 0 { close(stopNotice) }
        let writer = state.withLock { $0.noticeWriter }
        if writer >= 0 { close(writer) }
    }

    /// Hands `job` to its hook's lane. An idle lane starts it at once, on the
    /// caller's thread, so hooks offered in name order also start in name order;
    /// a busy one keeps it as the one run to do next.
    func offer(_ job: Job) {
        let startNow = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            if s.lanes[job.hook.name]?.running == true {
                s.lanes[job.hook.name]?.pending = job
                return false
            }
            s.lanes[job.hook.name] = Lane(running: true)
            s.busy += 1
            return true
        }
        guard startNow else { return }
        guard let process = start(job) else {
            // Refused: nothing can wait in this lane yet (only this task offers),
            // so this only marks it idle and never runs a hook on this thread.
            runNext(after: job.hook.name)
            return
        }
        let thread = SerialThread(name: "lifeline-hook")
        thread.perform { [self] in
            finish(process, { self.isStopping }, stopNotice)
            runNext(after: job.hook.name)
        }
        thread.stop()  // ends once the lane has nothing left to run
    }

    /// Drops what waits for a hook: the state it was meant for is over, and the
    /// hook does not run on the new one.
    func cancelPending(_ name: String) {
        state.withLock { s in s.lanes[name]?.pending = nil }
    }

    /// On the lane's thread (or the caller's, after a refusal): the runs that
    /// waited while the last one ran, one after the other, then the lane is idle.
    private func runNext(after name: String) {
        while let job = takePending(name) {
            guard let process = start(job) else { continue }
            finish(process, { self.isStopping }, stopNotice)
        }
    }

    private func takePending(_ name: String) -> Job? {
        let (job, waiters) = state.withLock { s -> (Job?, [CheckedContinuation<Void, Never>]) in
            if !s.stopping, let job = s.lanes[name]?.pending {
                s.lanes[name]?.pending = nil
                return (job, [])
            }
            s.lanes[name] = nil
            s.busy -= 1
            guard s.busy == 0 else { return (nil, []) }
            defer { s.idleWaiters = [] }
            return (nil, s.idleWaiters)
        }
        waiters.forEach { $0.resume() }
        return job
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Runs nothing more: what waits is dropped, and each running hook is stopped
    /// as at its timeout (SIGTERM, then SIGKILL). Returns once none runs.
    func stop() async {
        state.withLock { s in
            s.stopping = true
            for name in s.lanes.keys { s.lanes[name]?.pending = nil }
            if s.noticeWriter >= 0 { close(s.noticeWriter) }
            s.noticeWriter = -1
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { s -> Bool in
                if s.busy == 0 { return true }
                s.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
