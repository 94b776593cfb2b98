import LifelineCore
import Synchronization
import Testing

/// What a sink sees of its mailbox when the bus posts faster than it runs: a
/// lone post wakes a parked sink at once, posts that come between its wake-up
/// and its run coalesce into the newest (one wake-up for all of them), and a
/// log's transitions all arrive, in order.
///
/// The sink's task runs on `StepExecutor`, which runs its jobs only when the
/// test says so: the test can stop the sink between its wake-up and its run,
/// and can count the wake-ups (each resume of a parked sink is one job).
@Suite struct MailboxTests {
    func update(_ state: ConnectivityState, sequence: UInt64, transition: Bool = true, rtt: Double = -1) -> Update {
        Update(event: StateEvent(state: state, previous: .unknown, since: 0, rttMs: rtt, sequence: sequence),
               isTransition: transition)
    }

    /// A sink task on `executor` that takes `count` updates and keeps them.
    func sink(_ mailbox: Mailbox, on executor: StepExecutor, count: Int = 1) -> (Task<Void, Never>, Taken) {
        let taken = Taken()
        let task = Task(executorPreference: executor) {
            for _ in 0..<count {
                guard let u = await mailbox.next() else { taken.ended(); return }
                taken.add(u)
            }
        }
        return (task, taken)
    }

    @Test func aLonePostReachesAParkedSinkAtOnce() {
        let executor = StepExecutor()
        let mailbox = Mailbox(policy: .latest)
        let (task, taken) = sink(mailbox, on: executor)
        defer { task.cancel(); executor.runAll() }
        executor.runAll()
        #expect(taken.updates.isEmpty)  // parked: nothing waits
        #expect(executor.pending == 0)

        mailbox.post(update(.offline, sequence: 1))
        // The post itself made the sink's task ready: no timer, no other post.
        #expect(executor.pending == 1)
        executor.runAll()
        #expect(taken.updates.map(\.event.sequence) == [1])
    }

    @Test func postsWhileAWokenSinkHasNotRunCoalesceToTheNewest() {
        let executor = StepExecutor()
        let mailbox = Mailbox(policy: .latest)
        let (task, taken) = sink(mailbox, on: executor, count: 2)
        defer { task.cancel(); executor.runAll() }
        executor.runAll()

        mailbox.post(update(.offline, sequence: 1))
        mailbox.post(update(.offline, sequence: 1, transition: false, rtt: 20))
        mailbox.post(update(.online, sequence: 2, transition: false, rtt: 30))
        #expect(executor.pending == 1)  // one wake-up for the three posts
        executor.runAll()
        // The newest, still marked as a transition since one of those it replaced was.
        #expect(taken.updates.map(\.event.rttMs) == [30])
        #expect(taken.updates.first?.isTransition == true)
        #expect(mailbox.backlog == 0)  // nothing older is left to be taken after it

        mailbox.post(update(.limited, sequence: 3))
        executor.runAll()
        #expect(taken.updates.map(\.event.sequence) == [2, 3])
    }

    @Test func aSinkLooksAgainAfterTheReadyTasksRanBeforeItParks() {
        let executor = StepExecutor()
        let mailbox = Mailbox(policy: .latest)
        let (task, taken) = sink(mailbox, on: executor, count: 2)
        defer { task.cancel(); executor.runAll() }
        executor.runAll()
        mailbox.post(update(.offline, sequence: 1))
        executor.runOne()  // takes it, finds nothing more, and lets the ready tasks run first
        #expect(taken.updates.map(\.event.sequence) == [1])
        #expect(executor.pending == 1)

        // Posted while the other tasks run: the sink is not parked, so no resume.
        mailbox.post(update(.online, sequence: 2))
        #expect(executor.pending == 1)
        executor.runAll()
        #expect(taken.updates.map(\.event.sequence) == [1, 2])
    }

    @Test func everyTransitionWaitingForAWokenSinkArrivesInOrder() {
        let executor = StepExecutor()
        let mailbox = Mailbox(policy: .everyTransition(capacity: 10))
        let (task, taken) = sink(mailbox, on: executor, count: 3)
        defer { task.cancel(); executor.runAll() }
        executor.runAll()

        mailbox.post(update(.offline, sequence: 1))
        mailbox.post(update(.online, sequence: 2))
        mailbox.post(update(.online, sequence: 2, transition: false, rtt: 12))
        mailbox.post(update(.limited, sequence: 3))
        #expect(executor.pending == 1)
        executor.runAll()
        // The attribute-only update folds into the transition after it; no transition is lost.
        #expect(taken.updates.map(\.event.sequence) == [1, 2, 3])
        #expect(taken.updates.allSatisfy { $0.isTransition })
    }

    @Test func aParkedSinkEndsWhenCancelledFinishedOrClosed() {
        let executor = StepExecutor()
        for end in ["cancel", "finish", "close"] {
            let mailbox = Mailbox(policy: .latest)
            let (task, taken) = sink(mailbox, on: executor)
            executor.runAll()
            switch end {
            case "cancel": task.cancel()
            case "finish": mailbox.finish()
            default: mailbox.close()
            }
            executor.runAll()
            #expect(taken.hasEnded, "\(end)")
            task.cancel()
            executor.runAll()
        }
    }

    @Test func aFinishedMailboxHandsOutWhatWaitsFirst() {
        let executor = StepExecutor()
        let mailbox = Mailbox(policy: .everyTransition(capacity: 10))
        let (task, taken) = sink(mailbox, on: executor, count: 3)
        defer { task.cancel(); executor.runAll() }
        executor.runAll()
        mailbox.post(update(.offline, sequence: 1))
        mailbox.post(update(.online, sequence: 2))
        mailbox.finish()
        mailbox.post(update(.limited, sequence: 3))  // after the finish: not taken
        executor.runAll()
        #expect(taken.updates.map(\.event.sequence) == [1, 2])
        #expect(taken.hasEnded)
    }
}

/// Runs the jobs of the tasks that prefer it only in `runAll`, on the test's thread.
final class StepExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is only touched under its mutex.
    private let jobs = Mutex<[UnownedJob]>([])

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// Jobs waiting to run.
    var pending: Int { jobs.withLock { $0.count } }

    /// Runs the job that has waited longest, if any.
    func runOne() {
        guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
        job.runSynchronously(on: asUnownedTaskExecutor())
    }

    /// Runs jobs until none is ready (the tasks finished or wait for something).
    func runAll() {
        while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// What a sink task took, and whether its sequence ended.
final class Taken: Sendable {
    private let state = Mutex<(updates: [Update], ended: Bool)>(([], false))
    func add(_ u: Update) { state.withLock { $0.updates.append(u) } }
    func ended() { state.withLock { $0.ended = true } }
    var updates: [Update] { state.withLock { $0.updates } }
    var hasEnded: Bool { state.withLock { $0.ended } }
}
