import CEpoll
import Foundation
import LifelineCore
import LifelinePlatform
import Synchronization
import Testing
@testable import LifelineExecutor

/// The daemon's default executor (`EpollExecutor` over `EpollPool`): every job
/// runs, once; delayed jobs run at their deadline, never before, in deadline
/// order; a cancelled sleep ends at once; and its threads wake only for a job
/// or a deadline. Tasks reach it here through an executor preference, which
/// sends their jobs and their sleeps' deadlines to it as the daemon's default
/// executor receives them.
@Suite(.serialized) struct EpollExecutorTests {
    @Test func everyJobOfManyConcurrentTasksRunsOnce() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-many")
        defer { executor.stop() }
        let counter = Tally()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2000 {
                group.addTask(executorPreference: executor) {
                    await counter.add(index)  // an actor hop and back
                    if index % 7 == 0 { try? await Task.sleep(for: .milliseconds(index % 5)) }
                    await Task.yield()
                    await counter.add(index)
                }
            }
        }
        let seen = await counter.seen
        #expect(seen.count == 2000 && seen.values.allSatisfy { $0 == 2 }, "\(seen.count) tasks, \(seen.values.filter { $0 != 2 }.count) not counted twice")
    }

    @Test func jobsPushedFromManyThreadsAllRunOnce() async throws {
        let ran = Mutex([Int](repeating: 0, count: 8 * 2500))
        let pool = try EpollPool<() -> Void>(threads: 2, name: "qe-push") { $0() }
        defer { pool.stop() }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<2500 {
                let slot = thread * 2500 + index
                pool.push { ran.withLock { $0[slot] += 1 } }
            }
        }
        await waitUntil("every job to run") { ran.withLock { !$0.contains(0) } }
        #expect(ran.withLock { $0.allSatisfy { $0 == 1 } }, "a job ran twice")
    }

    /// One thread, so the order they run in is the order the pool released them.
    @Test func delayedJobsRunInDeadlineOrderAndNotBefore() async throws {
        let pool = try EpollPool<() -> Void>(threads: 1, name: "qe-order") { $0() }
        defer { pool.stop() }
        typealias Base = EpollPool<() -> Void>.Timebase
        let runs = Mutex<[(label: Int, late: Int64)]>([])
        // Label = delay in ms; both clocks, pushed out of order.
        let plan: [(Int, Base)] = [(250, .boottime), (60, .monotonic), (150, .boottime), (20, .boottime),
                                   (200, .monotonic), (100, .boottime), (100, .boottime)]
        for (ms, base) in plan {
            let deadline = base.now() + Int64(ms) * 1_000_000
            pool.push({ runs.withLock { $0.append((ms, base.now() - deadline)) } }, at: deadline, on: base)
        }
        pool.push({ runs.withLock { $0.append((0, 0)) } }, at: Base.boottime.now() - 1, on: .boottime)  // past: now
        await waitUntil("every delayed job to run") { runs.withLock { $0.count } == plan.count + 1 }
        let done = runs.withLock { $0 }
        #expect(done.map(\.label) == [0, 20, 60, 100, 100, 150, 200, 250], "\(done)")
        #expect(done.allSatisfy { $0.late >= 0 }, "ran before its deadline: \(done.filter { $0.late < 0 })")
    }

    @Test func sleepingTasksWakeInDeadlineOrderAndNotBefore() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-sleep")
        defer { executor.stop() }
        let clock = ContinuousClock()
        let woke = Locked<[(ms: Int, late: Duration)]>([])
        await withTaskGroup(of: Void.self) { group in
            for ms in [300, 100, 200, 50, 250, 150] {
                group.addTask(executorPreference: executor) {
                    let deadline = clock.now + .milliseconds(ms)
                    try? await Task.sleep(until: deadline, clock: clock)
                    let now = clock.now
                    woke.withLock { $0.append((ms, now - deadline)) }
                }
            }
        }
        let done = woke.withLock { $0 }
        #expect(done.map(\.ms) == [50, 100, 150, 200, 250, 300], "\(done)")
        #expect(done.allSatisfy { $0.late >= .zero }, "woke early: \(done)")
    }

    @Test func cancellingASleepingTaskEndsItsSleepAtOnce() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-cancel")
        defer { executor.stop() }
        let clock = ContinuousClock()
        let asleep = Locked(false)
        let task = Task(executorPreference: executor) { () -> Bool in
            asleep.withLock { $0 = true }
            do { try await Task.sleep(for: .seconds(600)) } catch { return true }
            return false
        }
        await waitUntil("the task to sleep") { asleep.withLock { $0 } }
        let cancelled = clock.now
        task.cancel()
        #expect(await task.value, "the sleep did not throw CancellationError")
        // Not a timing: "at once" against a 600 s sleep.
        #expect(clock.now - cancelled < .seconds(5))
    }

    /// The reason the executor exists: a thread wakes for a job or a deadline,
    /// never to look around. Counted with the kernel's voluntary context
    /// switches of the pool's threads (each sleep that a wake-up ends is one).
    @Test func poolThreadsWakeOnlyForADeadlineOrAJob() async throws {
        let name = "qe-idle-\(UInt16.random(in: 0...UInt16.max))"
        let ran = Locked(0)
        let pool = try await Self.settledPool(name: name, counting: ran)
        defer { pool.stop() }

        let quiet = Self.switches(of: name)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(Self.switches(of: name) == quiet, "idle pool threads woke: \(quiet) → \(Self.switches(of: name))")

        // A deadline: one thread wakes once for it and sleeps again.
        typealias Base = EpollPool<() -> Void>.Timebase
        pool.push({ ran.withLock { $0 += 1 } }, at: Base.boottime.now() + 300_000_000, on: .boottime)
        await waitUntil("the delayed job") { ran.withLock { $0 } == 2 }
        try await Task.sleep(for: .milliseconds(300))
        let afterDeadline = Self.switches(of: name)
        let deadlineWakes = Self.wakes(from: quiet, to: afterDeadline)
        #expect(deadlineWakes == 1, "wake-ups for one deadline: \(quiet) → \(afterDeadline)")

        // A job from outside while both sleep: one thread wakes.
        pool.push { ran.withLock { $0 += 1 } }
        await waitUntil("the third job") { ran.withLock { $0 } == 3 }
        try await Task.sleep(for: .milliseconds(300))
        let afterJob = Self.switches(of: name)
        let jobWakes = Self.wakes(from: afterDeadline, to: afterJob)
        #expect(jobWakes == 1, "wake-ups for one job: \(afterDeadline) → \(afterJob)")

        // A chain of jobs, each pushed by the one before (as a task resumes
        // another): the thread that runs one takes the next, no other wakes.
        @Sendable func chain(_ left: Int) {
            ran.withLock { $0 += 1 }
            if left > 0 { pool.push { chain(left - 1) } }
        }
        pool.push { chain(9) }
        await waitUntil("the chain of ten") { ran.withLock { $0 } == 13 }
        try await Task.sleep(for: .milliseconds(300))
        let afterChain = Self.switches(of: name)
        let chainWakes = Self.wakes(from: afterJob, to: afterChain)
        #expect(chainWakes == 1, "wake-ups for a chain of ten jobs: \(afterJob) → \(afterChain)")
    }

    /// A thread woken for a job runs it without waiting for the thread that
    /// pushed it: waking it while still holding the pool's lock cost it a
    /// second wake-up whenever the pusher was slow to return (descheduled
    /// right after the wake, as the kernel may do in favour of the thread it
    /// woke). Seen as two wake-ups of a pool thread for each probe result.
    @Test func aThreadWokenForAJobDoesNotWaitForItsPusher() async throws {
        let name = "qe-slow-\(UInt16.random(in: 0...UInt16.max))"
        let slow = Locked(false)
        let ran = Locked(0)
        let pool = try await Self.settledPool(name: name, counting: ran, afterWaking: {
            if slow.withLock({ $0 }) { usleep(200_000) }
        })
        defer { pool.stop() }

        let before = Self.switches(of: name)
        slow.withLock { $0 = true }
        let pusher = Thread { pool.push { ran.withLock { $0 += 1 } } }
        pusher.start()
        await waitUntil("the second job") { ran.withLock { $0 } == 2 }
        try await Task.sleep(for: .milliseconds(400))  // the pusher has returned; the thread sleeps again
        let after = Self.switches(of: name)
        let wakes = Self.wakes(from: before, to: after)
        #expect(wakes == 1, "wake-ups for one job from a slow pusher: \(before) → \(after)")
    }

    // MARK: - Waiting for descriptors

    @Test func aReadablePipeEndsTheWaitOnAPoolThread() async throws {
        let name = "qe-pipe-\(UInt16.random(in: 0...UInt16.max))"
        let executor = try EpollExecutor(threads: 2, name: name)
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let task = Task(executorPreference: executor) {
            let result = await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(60))
            return (result, Self.threadName())
        }
        await waitUntil("the wait to start") { executor.watchCount == 1 }
        pipe.writeByte()
        let (result, thread) = await task.value
        #expect(result == .ready)
        #expect(thread == name, "the task went on on thread \(thread)")
        #expect(executor.watchCount == 0)
    }

    /// Two tasks waiting for the same descriptor at once (one reads while
    /// another writes, say) both wait, and both see it ready; the duplicate
    /// the second one is watched through is closed when its wait ends.
    @Test func twoWaitsForOneDescriptorBothEnd() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-twice")
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let openBefore = Self.openDescriptors(of: pipe.read)
        let waits = (0..<2).map { _ in
            Task(executorPreference: executor) {
                await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(60))
            }
        }
        await waitUntil("both waits to start") { executor.watchCount == 2 }
        pipe.writeByte()
        for wait in waits { #expect(await wait.value == .ready) }
        #expect(executor.watchCount == 0)
        let openAfter = Self.openDescriptors(of: pipe.read)
        #expect(openAfter == openBefore, "descriptors of the pipe: \(openBefore) → \(openAfter)")
    }

    /// A peer that hung up (the write end closed) ends a wait for reading, as
    /// an error would: the next read says which.
    @Test func aHangUpEndsTheWait() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-hup")
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { close(pipe.read) }
        let task = Task(executorPreference: executor) {
            await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(60))
        }
        await waitUntil("the wait to start") { executor.watchCount == 1 }
        close(pipe.write)
        #expect(await task.value == .ready)
    }

    @Test func aWaitEndsAtItsDeadlineAndNotBefore() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-deadline")
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(200)
        let task = Task(executorPreference: executor) {
            let result = await executor.wait(for: pipe.read, events: Int16(POLLIN), until: deadline)
            return (result, clock.now)
        }
        let (result, ended) = await task.value
        #expect(result == .timedOut)
        #expect(ended >= deadline, "ended \(deadline - ended) before its deadline")
        // Not a timing: "at its deadline" against a wait that would last forever.
        #expect(ended - deadline < .seconds(5))
        #expect(executor.watchCount == 0)
    }

    @Test func cancellingTheWaitingTaskEndsItsWaitAtOnce() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-wcancel")
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let clock = ContinuousClock()
        let task = Task(executorPreference: executor) {
            await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(600))
        }
        await waitUntil("the wait to start") { executor.watchCount == 1 }
        let cancelled = clock.now
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(clock.now - cancelled < .seconds(5))
        #expect(executor.watchCount == 0, "the cancelled wait is still watched")

        // Cancelled before it waits: no watch is made at all.
        let early = Task(executorPreference: executor) {
            withUnsafeCurrentTask { $0?.cancel() }
            return await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(600))
        }
        #expect(await early.value == .cancelled)
        #expect(executor.watchCount == 0)
    }

    /// Cancelled while the watch is being made, from another thread: however the
    /// two fall, the wait ends, once, and leaves no watch behind.
    @Test func cancellingWhileTheWaitStartsNeverHangs() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-race")
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        for round in 0..<300 {
            let waiting = Atomic(false)
            let task = Task(executorPreference: executor) {
                waiting.store(true, ordering: .releasing)
                return await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(600))
            }
            // Cancelled as the wait starts, a little later each round.
            while !waiting.load(ordering: .acquiring) {}
            for _ in 0..<(round % 30) * 20 { _ = waiting.load(ordering: .relaxed) }
            task.cancel()
            // Bounded: a wait that missed its cancellation would hang here; the
            // executor's stop ends it.
            let ended = Locked<DescriptorWait?>(nil)
            Task { let result = await task.value; ended.withLock { $0 = result } }
            guard await waitUntil("round \(round)'s wait to end", { ended.withLock { $0 } != nil }) else { return }
            #expect(ended.withLock { $0 } == .cancelled)
        }
        #expect(executor.watchCount == 0)
    }

    /// epoll refuses a regular file (EPERM) and a descriptor that is not open
    /// (EBADF): the wait ends at once, and the caller's next read says why.
    @Test func aDescriptorEpollCannotWatchIsReadyAtOnce() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-file")
        defer { executor.stop() }
        let file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        try #require(file >= 0)
        defer { close(file) }
        let clock = ContinuousClock()
        let started = clock.now
        let results = await Task(executorPreference: executor) {
            [await executor.wait(for: file, events: Int16(POLLIN), until: .now + .seconds(600)),
             await executor.wait(for: -1, events: Int16(POLLIN), until: .now + .seconds(600))]
        }.value
        #expect(results == [.ready, .ready])
        #expect(clock.now - started < .seconds(5))
        #expect(executor.watchCount == 0)
    }

    /// The reason the pool watches descriptors: a reply on a socket a task
    /// waits for wakes one pool thread, once, and that thread goes on with the
    /// task (no thread of its own that polls, then wakes another).
    @Test func aReadableDescriptorWakesOnePoolThreadOnce() async throws {
        let name = "qe-wake-\(UInt16.random(in: 0...UInt16.max))"
        let executor = try EpollExecutor(threads: 2, name: name)
        defer { executor.stop() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let task = Task(executorPreference: executor) {
            await executor.wait(for: pipe.read, events: Int16(POLLIN), until: .now + .seconds(60))
        }
        await waitUntil("the wait to start") { executor.watchCount == 1 }
        let before = await Self.settled(name)
        pipe.writeByte()
        #expect(await task.value == .ready)
        let after = await Self.settled(name)
        let wakes = Self.wakes(from: before, to: after)
        #expect(wakes == 1, "wake-ups for one readable descriptor: \(before) → \(after)")
    }

    /// A watch that ended, whether its descriptor became ready or it was
    /// cancelled, takes its deadline with it: no thread wakes when that
    /// deadline comes.
    @Test func anEndedWatchWakesNoThreadAtItsOldDeadline() async throws {
        let name = "qe-stale-\(UInt16.random(in: 0...UInt16.max))"
        let ran = Locked(0)
        let pool = try await Self.settledPool(name: name, counting: ran)
        defer { pool.stop() }
        typealias Base = EpollPool<() -> Void>.Timebase
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let results = Locked<[DescriptorWait]>([])

        // Ends because the pipe is readable: one wake-up for that, none after.
        let readyDeadline = Base.boottime.now() + 600_000_000
        pool.watch(pipe.read, events: EPOLLIN.rawValue, until: readyDeadline, on: .boottime) { result in
            results.withLock { $0.append(result) }
        }
        let beforeReady = await Self.settled(name)
        pipe.writeByte()
        await waitUntil("the watch to end") { results.withLock { $0.count } == 1 }
        let afterReady = await Self.settled(name)
        #expect(Self.wakes(from: beforeReady, to: afterReady) == 1, "wake-ups for the readable pipe: \(beforeReady) → \(afterReady)")
        try await Self.sleep(pastBoottime: readyDeadline + 300_000_000)
        let afterOldDeadline = Self.switches(of: name)
        #expect(afterOldDeadline == afterReady, "woke at the deadline of a watch that had ended: \(afterReady) → \(afterOldDeadline)")

        // Cancelled: no wake-up at all, neither for the cancel nor at its deadline.
        pipe.drain()
        let cancelDeadline = Base.boottime.now() + 600_000_000
        let token = pool.watch(pipe.read, events: EPOLLIN.rawValue, until: cancelDeadline, on: .boottime) { result in
            results.withLock { $0.append(result) }
        }
        let beforeCancel = await Self.settled(name)
        pool.cancelWatch(token)
        try await Self.sleep(pastBoottime: cancelDeadline + 300_000_000)
        let afterCancel = Self.switches(of: name)
        #expect(afterCancel == beforeCancel, "woke for a cancelled watch: \(beforeCancel) → \(afterCancel)")
        #expect(results.withLock { $0 } == [.ready, .cancelled])
        #expect(pool.watchCount == 0)
    }

    @Test func stoppingThePoolCancelsItsWatches() async throws {
        let pool = try EpollPool<() -> Void>(threads: 2, name: "qe-wstop") { $0() }
        let pipe = try Pipe.make()
        defer { pipe.close() }
        let results = Locked<[DescriptorWait]>([])
        pool.watch(pipe.read, events: EPOLLIN.rawValue, until: .max, on: .monotonic) { result in
            results.withLock { $0.append(result) }
        }
        pool.stop()
        #expect(results.withLock { $0 } == [.cancelled])
        #expect(pool.watchCount == 0)
    }

    @Test func durationsBecomeWholeNanosecondsRoundedUp() {
        #expect(EpollExecutor.nanoseconds(.zero) == 0)
        #expect(EpollExecutor.nanoseconds(.nanoseconds(1)) == 1)
        #expect(EpollExecutor.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
        #expect(EpollExecutor.nanoseconds(Duration(secondsComponent: 0, attosecondsComponent: 1)) == 1)
        #expect(EpollExecutor.nanoseconds(.milliseconds(-5)) == 0)
        #expect(EpollExecutor.nanoseconds(.seconds(Int64.max)) == Int64.max)
    }

    /// A two-thread pool named `name` whose threads have both started and gone
    /// back to sleep after one job (which adds 1 to `ran`).
    private static func settledPool(name: String, counting ran: Locked<Int>,
                            afterWaking: (() -> Void)? = nil) async throws -> EpollPool<() -> Void> {
        let pool = try EpollPool<() -> Void>(threads: 2, name: name, afterWaking: afterWaking) { $0() }
        pool.push { ran.withLock { $0 += 1 } }
        await waitUntil("the first job") { ran.withLock { $0 } == 1 }
        await waitUntil("both threads named") { Self.switches(of: name).count == 2 }
        try await Task.sleep(for: .milliseconds(100))  // let the thread that ran it go back to sleep
        return pool
    }

    /// The voluntary context switches of the threads named `name` once they are
    /// all asleep and stay so.
    ///
    /// Two readings are compared only 10 ms apart (waitUntil's interval), never
    /// back to back: a thread on its way to sleep already shows "S" a moment
    /// before its switch is counted, and two readings inside that moment agree.
    private static func settled(_ name: String) async -> [String: Int] {
        var last: [String: Int]? = nil
        _ = await waitUntil("the threads to sleep") {
            let now = switches(of: name)
            defer { last = now }
            return now == last && states(of: name).allSatisfy { $0 == "S" }
        }
        return last ?? [:]
    }

    /// Lets time pass until CLOCK_BOOTTIME reads `deadline` (ns): a window to count wake-ups over.
    private static func sleep(pastBoottime deadline: Int64) async throws {
        let left = deadline - EpollPool<() -> Void>.Timebase.boottime.now()
        if left > 0 { try await Task.sleep(for: .nanoseconds(left)) }
    }

    /// The numbers of this process's descriptors open on the same pipe,
    /// socket or file as `fd`.
    static func openDescriptors(of fd: Int32) -> Set<String> {
        func target(_ number: String) -> String? {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(number)")
        }
        guard let wanted = target(String(fd)) else { return [] }
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(numbers.filter { target($0) == wanted })
    }

    /// The calling thread's name.
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// The scheduler states (R, S, D…) of this process's threads named `name`.
    static func states(of name: String) -> [Character] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            let stat = (try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8)) ?? ""
            // "pid (comm) state …": comm may hold spaces or parentheses, so cut at the last ')'.
            guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"), open < close,
                  stat[stat.index(after: open)..<close] == name.prefix(15) else { return nil }
            return stat[stat.index(after: close)...].first { $0 != " " }
        }
    }

    /// Wake-ups (voluntary context switches) of all threads between two counts.
    static func wakes(from before: [String: Int], to after: [String: Int]) -> Int {
        after.keys.reduce(0) { $0 + after[$1]! - before[$1, default: 0] }
    }

    /// Voluntary context switches of this process's threads named `name`, by thread id.
    static func switches(of name: String) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var result: [String: Int] = [:]
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .newlines) == String(name.prefix(15)) else { continue }
            let status = (try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                result[task] = Int(line.split(separator: "\t").last ?? "")
            }
        }
        return result
    }
}

/// A value behind a lock that closures can share (a `Mutex` itself cannot be captured by a task).
private final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout sending Value) -> sending T) -> T { mutex.withLock(body) }
}

private actor Tally {
    var seen: [Int: Int] = [:]
    func add(_ index: Int) { seen[index, default: 0] += 1 }
}

/// Both ends of a pipe, non-blocking.
private struct Pipe {
    let read: Int32
    let write: Int32

    static func make() throws -> Pipe {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        return Pipe(read: fds[0], write: fds[1])
    }

    func writeByte() {
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
    }

    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(read, &bytes, bytes.count) > 0 {}
    }

    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}
