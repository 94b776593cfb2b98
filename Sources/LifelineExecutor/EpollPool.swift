import CEpoll
import Glibc
import LifelinePlatform

/// The threads behind `EpollExecutor`, and the only places where they wait.
///
/// Every thread sleeps in `epoll_wait` on an epoll set of its own holding its
/// own eventfd: `push` wakes exactly the thread it picks, and only when the
/// jobs ready outnumber the threads already woken for them; it signals the
/// eventfd after letting go of the lock, so the woken thread never wakes only
/// to wait for that lock. Delayed jobs wait
/// in a heap per clock, and one timerfd per clock is armed for the earliest
/// deadline (absolute, so a deadline never drifts). The two timerfds sit in one
/// more epoll set, the watch set, that exactly one sleeping thread, the
/// timekeeper, watches besides its eventfd; when the timekeeper wakes it hands
/// that set to another sleeping thread by moving it between their epoll sets,
/// which wakes no one.
///
/// Descriptors a task waits for (`watch`) join the watch set too, one-shot, so
/// the timekeeper is the thread a readable socket wakes: it runs the watch's
/// callback, which resumes the task, and a job pushed from a pool thread is
/// taken by that thread next, so the task goes on where the wake-up landed.
/// A watch's deadline is kept with the watch, not as a delayed job: a watch
/// that ends takes its deadline with it, and the timer is moved to the next.
///
/// So a ready job wakes one thread, a deadline wakes one thread, a watched
/// descriptor wakes one thread, and nothing else ever does: no thread wakes to
/// look for work, and no timer is armed but for a job or a watch that waits
/// for it. Jobs run first in, first out.
final class EpollPool<Job>: @unchecked Sendable {
    // @unchecked: every stored var is read and written only with `mutex` held;
    // the descriptors are fixed at init, and the kernel serialises their use.

    /// The clocks a deadline can be on.
    enum Timebase: Int, CaseIterable {
        /// Counts the time the machine was suspended, as `ContinuousClock` does.
        case boottime
        /// Stands still while the machine is suspended, as `SuspendingClock` does.
        case monotonic

        var clock: clockid_t { self == .boottime ? CLOCK_BOOTTIME : CLOCK_MONOTONIC }

        /// Now on this clock, in nanoseconds.
        func now() -> Int64 {
            var time = timespec()
            clock_gettime(clock, &time)
            return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private struct Sleeper {
        let epoll: Int32
        let wake: Int32
    }

    /// A descriptor a caller waits for, until `deadline` on `base`'s clock.
    private struct Watch {
        /// The descriptor in the watch set: the caller's, or a duplicate of it
        /// (`owned`) when the caller's is in the set already for another watch.
        let fd: Int32
        let owned: Bool
        let deadline: Int64
        let base: Timebase
        let then: @Sendable (DescriptorWait) -> Void
    }

    /// Marks a watch's token in the watch set's `data.u64`; a timer's is its
    /// clock's `Timebase.rawValue`.
    private static var watchTag: UInt64 { 1 << 63 }

    let name: String
    private let run: (Job) -> Void
    /// Runs right after a thread was signalled to wake (for tests: a pusher
    /// slow to return, as when the kernel lets the thread it woke run first).
    private let afterWaking: (() -> Void)?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let timers: [Int32]
    /// The timerfds and the watched descriptors: the set the timekeeper sleeps on.
    private let watchSet: Int32
    private let sleepers: [Sleeper]

    private var ready = JobLine<Job>()
    private var delayed = [DeadlineHeap<Job>](repeating: DeadlineHeap(), count: Timebase.allCases.count)
    /// The deadline each timerfd is armed for (nil: disarmed or already expired).
    private var armed = [Int64?](repeating: nil, count: Timebase.allCases.count)
    private var watches: [UInt64: Watch] = [:]
    private var nextWatch: UInt64 = 1
    /// Threads asleep (or about to be) that no one has woken yet.
    private var asleep: [Int] = []
    /// Threads woken by `push` that have not yet taken the lock since.
    private var woken = 0
    /// The sleeping thread whose epoll set holds the watch set, if any.
    private var keeper: Int?
    private var running = 0
    /// The pool's own threads, to tell a push from a job from one from outside.
    private var members: [pthread_t] = []
    private var stopping = false

    /// Starts `threads` threads named `name` that call `run` for each job.
    init(threads: Int, name: String, afterWaking: (() -> Void)? = nil, run: @escaping (Job) -> Void) throws(Failure) {
        // Every descriptor is made before any property is set: a failure closes
        // what was made and leaves no half-built pool behind.
        var made: [Int32] = []
        func fail(_ what: String) -> Failure {
            let failure = Failure(description: "\(what): \(String(cString: strerror(errno)))")
            for fd in made { close(fd) }
            return failure
        }
        var timers: [Int32] = []
        for base in Timebase.allCases {
            let fd = timerfd_create(base.clock, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
            guard fd >= 0 else { throw fail("timerfd_create") }
            made.append(fd)
            timers.append(fd)
        }
        let watchSet = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard watchSet >= 0 else { throw fail("epoll_create1") }
        made.append(watchSet)
        for base in Timebase.allCases {
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(base.rawValue)))
            guard epoll_ctl(watchSet, EPOLL_CTL_ADD, timers[base.rawValue], &event) == 0 else { throw fail("epoll_ctl") }
        }
        var sleepers: [Sleeper] = []
        for _ in 0..<max(threads, 1) {
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epoll >= 0 else { throw fail("epoll_create1") }
            made.append(epoll)
            let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            guard wake >= 0 else { throw fail("eventfd") }
            made.append(wake)
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wake))
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event) == 0 else { throw fail("epoll_ctl") }
            sleepers.append(Sleeper(epoll: epoll, wake: wake))
        }
        self.name = name
        self.run = run
        self.afterWaking = afterWaking
        self.timers = timers
        self.watchSet = watchSet
        self.sleepers = sleepers
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        for index in sleepers.indices {
            // Each thread holds the pool until it ends, and closes its own descriptors.
            let start = Unmanaged.passRetained(ThreadStart { self.work(index) }).toOpaque()
            var thread = pthread_t()
            guard pthread_create(&thread, nil, { argument in
                Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, start) == 0 else {
                Unmanaged<ThreadStart>.fromOpaque(start).release()
                for unused in sleepers[index...] {
                    close(unused.epoll)
                    close(unused.wake)
                }
                if index == 0 { throw Failure(description: "pthread_create failed") }
                break  // fewer threads than asked for: still a working pool
            }
            pthread_detach(thread)
            lock()
            running += 1
            unlock()
        }
    }

    deinit {
        for fd in timers { close(fd) }
        close(watchSet)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `job` as soon as a thread is free.
    func push(_ job: Job) {
        lock()
        ready.append(job)
        let woke = wakeOneIfNeeded(pushedByMember: members.contains(pthread_self()))
        unlock()
        signal(woke)
    }

    /// Runs `job` once `base`'s clock reads `deadline` (nanoseconds) or later.
    func push(_ job: Job, at deadline: Int64, on base: Timebase) {
        lock()
        var woke: Int?
        if deadline <= base.now() {
            ready.append(job)
            woke = wakeOneIfNeeded(pushedByMember: members.contains(pthread_self()))
        } else {
            delayed[base.rawValue].insert(job, deadline: deadline)
            // A new earliest deadline: move the timer. The timekeeper sleeps on
            // it, and if every thread is busy, the first to go to sleep takes the
            // timers over and sees it.
            rearm(base)
        }
        unlock()
        signal(woke)
    }

    /// Calls `then` once, on a pool thread, when `fd` has one of `events`
    /// (`EPOLLIN`, `EPOLLOUT`; an error or a hang-up counts too) with `.ready`,
    /// or once `base`'s clock reads `deadline` (nanoseconds) with `.timedOut`;
    /// or with `.cancelled` on the thread that calls `cancelWatch(token)` or
    /// `stop` first. A descriptor epoll cannot watch (a regular file, one
    /// closed) gets `.ready` at once: the caller's next call on it says what
    /// is wrong, where a watch would never end.
    @discardableResult
    func watch(_ fd: Int32, events: UInt32, until deadline: Int64, on base: Timebase,
               then: @escaping @Sendable (DescriptorWait) -> Void) -> WatchToken {
        lock()
        let id = nextWatch
        nextWatch += 1
        let token = WatchToken(id: id)
        guard !stopping else {
            unlock()
            then(.cancelled)
            return token
        }
        guard deadline > base.now() else {
            unlock()
            // Past its deadline already: one look, no wait.
            var fds = pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0)
            then(poll(&fds, 1, 0) == 0 ? .timedOut : .ready)
            return token
        }
        guard let watched = register(fd, events: events, id: id) else {
            unlock()
            then(.ready)
            return token
        }
        watches[id] = Watch(fd: watched.fd, owned: watched.owned, deadline: deadline, base: base, then: then)
        rearm(base)
        unlock()
        return token
    }

    /// Ends the watch `token` with `.cancelled`, called on this thread, if it
    /// has not ended yet; else does nothing.
    func cancelWatch(_ token: WatchToken) {
        lock()
        let watch = end(token.id)
        if let watch { rearm(watch.base) }
        unlock()
        watch?.then(.cancelled)
    }

    /// Ends the threads once the jobs ready now have run; delayed jobs are
    /// dropped and watches end with `.cancelled`. Does not wait. For tests:
    /// the daemon's pool lives as long as the process does.
    func stop() {
        lock()
        stopping = true
        var woke: [Int] = []
        while !asleep.isEmpty { woke.append(wakeUp(asleep.removeLast())) }
        let ended = watches.keys.compactMap(end)
        rearm()
        unlock()
        for thread in woke { signal(thread) }
        for watch in ended { watch.then(.cancelled) }
    }

    /// How many threads are running (for tests).
    var threadCount: Int {
        lock()
        defer { unlock() }
        return running
    }

    /// How many watches have not ended yet (for tests).
    var watchCount: Int {
        lock()
        defer { unlock() }
        return watches.count
    }

    // MARK: - The threads

    private func work(_ me: Int) {
        Self.nameThread(name)
        let sleeper = sleepers[me]
        var events = [epoll_event](repeating: epoll_event(), count: 2)
        var ended: [(Watch, DescriptorWait)] = []
        lock()
        members.append(pthread_self())
        while true {
            releaseDue()
            expireWatches(into: &ended)
            if !ended.isEmpty {
                rearm()  // now, not once this thread sleeps again: an ended watch's deadline wakes no one
                // Outside the lock: a callback resumes a task, whose job this
                // thread pushes and then takes itself.
                unlock()
                for (watch, result) in ended { watch.then(result) }
                ended.removeAll(keepingCapacity: true)
                lock()
                continue
            }
            if let job = ready.popFirst() {
                // More ready than threads woken for them (say, deadlines that fell together).
                let woke = wakeOneIfNeeded()
                unlock()
                signal(woke)
                run(job)
                lock()
                continue
            }
            if stopping { break }
            rearm()
            asleep.append(me)
            if keeper == nil { takeWatchSet(me) }
            unlock()
            _ = epoll_wait(sleeper.epoll, &events, Int32(events.count), -1)
            lock()
            if let index = asleep.firstIndex(of: me) {
                asleep.remove(at: index)  // woken by a deadline (or EINTR), not by `push`
            } else {
                woken -= 1
                var count: UInt64 = 0
                if read(sleeper.wake, &count, 8) != 8 {
                    // Chosen by a push while a deadline woke it, and the pusher
                    // has not signalled yet (it does so once it has let go of
                    // the lock): take that signal now, or it would end the next
                    // sleep for nothing.
                    unlock()
                    var readable = pollfd(fd: sleeper.wake, events: Int16(POLLIN), revents: 0)
                    _ = poll(&readable, 1, -1)
                    _ = read(sleeper.wake, &count, 8)
                    lock()
                }
            }
            if keeper == me {
                // First: a fired timer or a ready watch handed over would wake the next thread too.
                collectExpired()
                collectReadyWatches(into: &ended)
                handOverWatchSet(from: me)
            }
        }
        running -= 1
        unlock()
        close(sleeper.epoll)
        close(sleeper.wake)
    }

    /// Moves delayed jobs whose deadline has come to the ready line.
    private func releaseDue() {
        for base in Timebase.allCases where !delayed[base.rawValue].isEmpty {
            let now = base.now()
            while let job = delayed[base.rawValue].popDue(now: now) { ready.append(job) }
        }
    }

    /// Picks a sleeping thread to wake if the ready jobs outnumber the threads
    /// already woken for them; the caller signals it (`signal`) once it has
    /// let go of the lock, so the thread does not wake only to wait for it. A job pushed by one of the pool's threads (a task resuming
    /// another, a sleep's timer job resuming its task) counts that thread as
    /// coming: it takes the next job as soon as its own ends, which saves waking
    /// a second thread for a chain of one job after another. It prefers not to
    /// wake the timekeeper, so the timers need not move.
    private func wakeOneIfNeeded(pushedByMember: Bool = false) -> Int? {
        guard ready.count > woken + (pushedByMember ? 1 : 0), !asleep.isEmpty else { return nil }
        let index = asleep.lastIndex { $0 != keeper } ?? asleep.count - 1
        return wakeUp(asleep.remove(at: index))
    }

    /// Counts `thread` as woken (with the lock held); `signal` wakes it.
    private func wakeUp(_ thread: Int) -> Int {
        woken += 1
        return thread
    }

    /// Ends the sleep of a thread picked by `wakeOneIfNeeded`, without the lock.
    private func signal(_ thread: Int?) {
        guard let thread else { return }
        var one: UInt64 = 1
        _ = write(sleepers[thread].wake, &one, 8)
        afterWaking?()
    }

    // MARK: - The timers

    private func arm(_ base: Timebase, at deadline: Int64?) {
        var spec = itimerspec()
        if let deadline {
            spec.it_value.tv_sec = Int(deadline / 1_000_000_000)
            spec.it_value.tv_nsec = Int(deadline % 1_000_000_000)
        }
        // Zero disarms: no job waits on that clock any more.
        _ = timerfd_settime(timers[base.rawValue], Int32(TFD_TIMER_ABSTIME), &spec, nil)
        armed[base.rawValue] = deadline
    }

    /// Arms each timer for its clock's earliest deadline of a job or a watch,
    /// or disarms it.
    private func rearm() {
        for base in Timebase.allCases { rearm(base) }
    }

    private func rearm(_ base: Timebase) {
        var earliest = delayed[base.rawValue].earliest
        for watch in watches.values where watch.base == base && watch.deadline < earliest ?? .max {
            earliest = watch.deadline
        }
        if armed[base.rawValue] != earliest { arm(base, at: earliest) }
    }

    /// Reads the timers that fired, which clears them (the jobs they were armed
    /// for are released on the way back to sleep).
    private func collectExpired() {
        for base in Timebase.allCases {
            var count: UInt64 = 0
            if read(timers[base.rawValue], &count, 8) == 8 { armed[base.rawValue] = nil }
        }
    }

    private func takeWatchSet(_ thread: Int) {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: watchSet))
        _ = epoll_ctl(sleepers[thread].epoll, EPOLL_CTL_ADD, watchSet, &event)
        keeper = thread
    }

    private func handOverWatchSet(from thread: Int) {
        var event = epoll_event()
        _ = epoll_ctl(sleepers[thread].epoll, EPOLL_CTL_DEL, watchSet, &event)
        keeper = nil
        if let next = asleep.first { takeWatchSet(next) }
    }

    // MARK: - The watches

    /// Adds `fd` to the watch set, one-shot, under the token `id`; nil if epoll
    /// refuses it.
    private func register(_ fd: Int32, events: UInt32, id: UInt64) -> (fd: Int32, owned: Bool)? {
        var event = epoll_event(events: events | EPOLLONESHOT.rawValue, data: epoll_data_t(u64: Self.watchTag | id))
        if epoll_ctl(watchSet, EPOLL_CTL_ADD, fd, &event) == 0 { return (fd, false) }
        // Watched already by another wait (one task reads while another
        // writes): epoll holds each descriptor once, so this one watches a
        // duplicate of it.
        guard errno == EEXIST else { return nil }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        guard epoll_ctl(watchSet, EPOLL_CTL_ADD, copy, &event) == 0 else {
            close(copy)
            return nil
        }
        return (copy, true)
    }

    /// Takes the watch `id` out of the pool and the watch set, if it has not ended.
    private func end(_ id: UInt64) -> Watch? {
        guard let watch = watches.removeValue(forKey: id) else { return nil }
        var event = epoll_event()
        _ = epoll_ctl(watchSet, EPOLL_CTL_DEL, watch.fd, &event)
        if watch.owned { close(watch.fd) }
        return watch
    }

    /// Ends the watches whose descriptor is ready (`.ready`), without waiting.
    private func collectReadyWatches(into ended: inout [(Watch, DescriptorWait)]) {
        guard !watches.isEmpty else { return }
        var events = [epoll_event](repeating: epoll_event(), count: 8)
        while true {
            let count = Int(epoll_wait(watchSet, &events, Int32(events.count), 0))
            for event in events.prefix(max(count, 0)) where event.data.u64 & Self.watchTag != 0 {
                if let watch = end(event.data.u64 & ~Self.watchTag) { ended.append((watch, .ready)) }
            }
            // A full batch: more may be ready (the timers, read already, are not reported again).
            guard count == events.count else { break }
        }
    }

    /// Ends the watches whose deadline has come (`.timedOut`).
    private func expireWatches(into ended: inout [(Watch, DescriptorWait)]) {
        guard !watches.isEmpty else { return }
        var now = [Int64?](repeating: nil, count: Timebase.allCases.count)
        var due: [UInt64] = []
        for (id, watch) in watches {
            let clock = now[watch.base.rawValue] ?? watch.base.now()
            now[watch.base.rawValue] = clock
            if watch.deadline <= clock { due.append(id) }
        }
        for id in due {
            if let watch = end(id) { ended.append((watch, .timedOut)) }
        }
    }

    // MARK: -

    private func lock() { pthread_mutex_lock(mutex) }
    private func unlock() { pthread_mutex_unlock(mutex) }

    /// Names the calling thread (ps -L, top -H, /proc/PID/task/TID/comm; the
    /// kernel keeps 15 bytes).
    private static func nameThread(_ name: String) {
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard comm >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
        close(comm)
    }
}

/// Names one watch of a `EpollPool`, to cancel it.
struct WatchToken: Hashable, Sendable {
    let id: UInt64
}

private final class ThreadStart {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
