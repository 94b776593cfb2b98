import CEpoll
import Glibc

/// The threads behind `QuietExecutor`, and the only places where they wait.
///
/// Every thread sleeps in `epoll_wait` on an epoll set of its own holding its
/// own eventfd: `push` wakes exactly the thread it picks, and only when the
/// jobs ready outnumber the threads already woken for them; it signals the
/// eventfd after letting go of the lock, so the woken thread never wakes only
/// to wait for that lock. Delayed jobs wait
/// in a heap per clock, and one timerfd per clock is armed for the earliest
/// deadline (absolute, so a deadline never drifts). The two timerfds sit in one
/// more epoll set that exactly one sleeping thread, the timekeeper, watches
/// besides its eventfd; when the timekeeper wakes it hands that set to another
/// sleeping thread by moving it between their epoll sets, which wakes no one.
///
/// So a ready job wakes one thread, a deadline wakes one thread, and nothing
/// else ever does: no thread wakes to look for work, and no timer is armed
/// but for a job that waits for it. Jobs run first in, first out.
final class QuietPool<Job>: @unchecked Sendable {
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

    let name: String
    private let run: (Job) -> Void
    /// Runs right after a thread was signalled to wake (for tests: a pusher
    /// slow to return, as when the kernel lets the thread it woke run first).
    private let afterWaking: (() -> Void)?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let timers: [Int32]
    private let timerSet: Int32
    private let sleepers: [Sleeper]

    private var ready = JobLine<Job>()
    private var delayed = [DeadlineHeap<Job>](repeating: DeadlineHeap(), count: Timebase.allCases.count)
    /// The deadline each timerfd is armed for (nil: disarmed or already expired).
    private var armed = [Int64?](repeating: nil, count: Timebase.allCases.count)
    /// Threads asleep (or about to be) that no one has woken yet.
    private var asleep: [Int] = []
    /// Threads woken by `push` that have not yet taken the lock since.
    private var woken = 0
    /// The sleeping thread whose epoll set holds the timers, if any.
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
        let timerSet = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard timerSet >= 0 else { throw fail("epoll_create1") }
        made.append(timerSet)
        for fd in timers {
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: fd))
            guard epoll_ctl(timerSet, EPOLL_CTL_ADD, fd, &event) == 0 else { throw fail("epoll_ctl") }
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
        self.timerSet = timerSet
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
        close(timerSet)
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

    /// Ends the threads once the jobs ready now have run; delayed jobs are
    /// dropped. Does not wait. For tests: the daemon's pool lives as long as
    /// the process does.
    func stop() {
        lock()
        stopping = true
        var woke: [Int] = []
        while !asleep.isEmpty { woke.append(wakeUp(asleep.removeLast())) }
        unlock()
        for thread in woke { signal(thread) }
    }

    /// How many threads are running (for tests).
    var threadCount: Int {
        lock()
        defer { unlock() }
        return running
    }

    // MARK: - The threads

    private func work(_ me: Int) {
        Self.nameThread(name)
        let sleeper = sleepers[me]
        var events = [epoll_event](repeating: epoll_event(), count: 2)
        lock()
        members.append(pthread_self())
        while true {
            releaseDue()
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
            if keeper == nil { takeTimers(me) }
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
                collectExpired()  // first: a fired timer handed over would wake the next thread too
                handOverTimers(from: me)
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

    /// Arms each timer for its clock's earliest deadline, or disarms it.
    private func rearm() {
        for base in Timebase.allCases { rearm(base) }
    }

    private func rearm(_ base: Timebase) {
        let earliest = delayed[base.rawValue].earliest
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

    private func takeTimers(_ thread: Int) {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: timerSet))
        _ = epoll_ctl(sleepers[thread].epoll, EPOLL_CTL_ADD, timerSet, &event)
        keeper = thread
    }

    private func handOverTimers(from thread: Int) {
        var event = epoll_event()
        _ = epoll_ctl(sleepers[thread].epoll, EPOLL_CTL_DEL, timerSet, &event)
        keeper = nil
        if let next = asleep.first { takeTimers(next) }
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

private final class ThreadStart {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
