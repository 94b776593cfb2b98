import CProcess
import Glibc
import Synchronization

/// A child that `Spawn` started, and the one way to wait for it: its exit is
/// a pidfd (a descriptor that turns readable when the process exits), awaited
/// like any descriptor through `DescriptorWaiting`. In the daemon the
/// executor's epoll set then wakes once, when the child ends, however long it
/// runs (a browser left open for hours costs nothing meanwhile); the command
/// line, which runs no executor, waits with `poll` on the same descriptor.
///
/// Whoever holds a `Child` waits for it (`exit`, `collect`, `stop`), so it
/// leaves no zombie. Once it is reaped its pid may name another process, so
/// signals go through `signal`, which sends none to a reaped child.
public final class Child: Sendable {
    public let pid: pid_t
    /// It heads a process group of its own: `signal` and `stop` reach the group.
    public let headsGroup: Bool
    /// The pidfd, or -1 on kernels without them (before 5.3), where waiting
    /// looks now and then instead.
    private let exitNotice: Int32
    /// How it ended, once reaped.
    private let ended = Mutex<Ending?>(nil)

    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// Signal N ended it.
        case signaled(Int32)

        init(status: Int32) {
            self = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
        }

        /// As a shell reports it: 128 + N for a death by signal N.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }
    }

    init(pid: pid_t, headsGroup: Bool) {
        self.pid = pid
        self.headsGroup = headsGroup
        // Opened before anyone reaps it: a child that exited already is a
        // zombie still, and its pidfd is readable at once.
        exitNotice = lifeline_pidfd_open(pid)
    }

    deinit {
        if exitNotice >= 0 { close(exitNotice) }
    }

    /// How it ended, reaping it; nil while it runs. Never blocks.
    public func ending() -> Ending? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            while true {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid {
                    ended = Ending(status: status)
                    return ended
                }
                if r == 0 { return nil }
                if errno == EINTR { continue }
                // Gone without a status (ECHILD: SIGCHLD ignored, so the kernel
                // reaped it): counted as a shell counts a command it could not run.
                ended = .exited(127)
                return ended
            }
        }
    }

    /// Sends `signal` to the child, or to its group when it heads one (the
    /// group's number stays taken while it has a member, so it names no one
    /// else's). Nothing is sent to a child already reaped. False when nothing
    /// was there to receive it.
    @discardableResult
    public func signal(_ signal: Int32, toGroup: Bool? = nil) -> Bool {
        ended.withLock { ended in
            if toGroup ?? headsGroup { return kill(-pid, signal) == 0 }
            return ended == nil && kill(pid, signal) == 0
        }
    }

    /// Whether any process of its group is left (false when it heads none).
    public var groupAlive: Bool { headsGroup && kill(-pid, 0) == 0 }

    // MARK: Waiting

    /// Waits until it exits, until `deadline` (nil: none) or until the task is
    /// cancelled; how it ended, or nil when it still runs.
    public func exit(by deadline: ContinuousClock.Instant? = nil) async -> Ending? {
        var pause = Duration.milliseconds(10)
        while true {
            if let ending = ending() { return ending }
            let until = deadline ?? .now + .seconds(86400)
            if ContinuousClock.now >= until || Task.isCancelled { return nil }
            if exitNotice >= 0 {
                if await DescriptorWaiting.current.wait(for: exitNotice, events: Int16(POLLIN), until: until) == .cancelled {
                    return ending()
                }
            } else {
                try? await Task.sleep(until: min(until, .now + pause))
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    /// `exit(by:)` for a thread that may block (the command line, a hook's lane).
    public func waitForExit(by deadline: ContinuousClock.Instant? = nil) -> Ending? {
        while true {
            if let ending = ending() { return ending }
            var ms: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return nil }
                ms = left.roundedUpMilliseconds
            }
            if exitNotice >= 0 {
                var p = pollfd(fd: exitNotice, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, ms)
            } else {
                var nap = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                nanosleep(&nap, nil)
            }
        }
    }

    /// Blocks until `fd` is readable (-1: none), `wake` is (-1: none), the
    /// child exits, or `deadline`: one `poll` over them all, for a thread that
    /// reads a child's output itself (a hook's lane). True when `fd` is readable.
    public func waitForExit(orReadable fd: Int32, orWoken wake: Int32 = -1, by deadline: ContinuousClock.Instant) -> Bool {
        let ms = max(0, ContinuousClock.now.duration(to: deadline).roundedUpMilliseconds)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: exitNotice, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        // Without a pidfd the exit shows only at the deadline: look every 10 ms.
        let n = poll(&fds, 3, exitNotice >= 0 ? ms : min(ms, 10))
        return n > 0 && fds[0].revents != 0
    }

    /// Waits for the end of a child sent SIGKILL: it comes whatever the
    /// caller's task wants, so the child is reaped even when it is cancelled.
    private func exitAfterKill() async -> Ending {
        let child = self
        return await Task { await child.exit() ?? .signaled(SIGKILL) }.value
    }

    // MARK: Stopping

    /// SIGTERM (to its group when it heads one), SIGKILL `grace` later if it
    /// still runs; how it ended. Reaped whatever happens to the caller's task.
    public func stop(grace: Duration = .seconds(2)) async -> Ending {
        signal(SIGTERM)
        let child = self
        return await Task {
            if let ending = await child.exit(by: .now + grace) { return ending }
            child.signal(SIGKILL)
            return await child.exitAfterKill()
        }.value
    }

    /// `stop` for a thread that may block.
    public func stopWaiting(grace: Duration = .seconds(2)) -> Ending {
        signal(SIGTERM)
        if let ending = waitForExit(by: .now + grace) { return ending }
        signal(SIGKILL)
        return waitForExit() ?? .signaled(SIGKILL)
    }

    // MARK: Collecting

    /// What a child run to its end printed, and how it ended.
    public struct Collected: Sendable {
        /// Standard output, up to the limit.
        public var output: [UInt8] = []
        /// The start of standard error.
        public var errors: [UInt8] = []
        /// It printed more than the limit, and was killed.
        public var outputTooLarge = false
        /// It ran past the deadline, and was killed.
        public var timedOut = false
        /// How it ended (also when it was killed).
        public var ending: Ending = .exited(127)
    }

    /// Runs the child to its end through its standard streams: writes `input`
    /// to `inputFD` (sent so that a child gone before reading it cannot raise
    /// SIGPIPE here), keeps standard output up to `outputLimit` bytes and the
    /// first `errorLimit` of standard error, and kills it (SIGKILL) past the
    /// limit or `deadline`. The descriptors are the collector's: it closes them.
    /// One loop over one epoll descriptor, awaited on the executor.
    public func collect(output: Int32, errors: Int32, input: [UInt8] = [], inputFD: Int32 = -1,
                        outputLimit: Int, errorLimit: Int = 4096, by deadline: ContinuousClock.Instant) async -> Collected {
        var collector = StreamCollector(input: inputFD, bytes: input, output: output, errors: errors,
                                        outputLimit: outputLimit, errorLimit: errorLimit)
        while collector.pump() {
            if ContinuousClock.now >= deadline {
                collector.result.timedOut = true
                break
            }
            let wait = await DescriptorWaiting.current.wait(for: collector.readiness, events: Int16(POLLIN), until: collector.nextLook(deadline))
            if wait == .cancelled {
                collector.result.timedOut = true
                break
            }
        }
        // Killed before its streams close, so that it dies of SIGKILL and not of a SIGPIPE.
        if collector.result.timedOut || collector.result.outputTooLarge { signal(SIGKILL, toGroup: false) }
        var result = collector.finish()
        if !result.timedOut && !result.outputTooLarge, let ending = await exit(by: deadline) {
            result.ending = ending
            return result
        }
        result.timedOut = !result.outputTooLarge
        signal(SIGKILL, toGroup: false)
        result.ending = await exitAfterKill()
        return result
    }

    /// `collect` for a thread that may block (the config parser's child).
    public func collectWaiting(output: Int32, errors: Int32, input: [UInt8] = [], inputFD: Int32 = -1,
                               outputLimit: Int, errorLimit: Int = 4096, by deadline: ContinuousClock.Instant) -> Collected {
        var collector = StreamCollector(input: inputFD, bytes: input, output: output, errors: errors,
                                        outputLimit: outputLimit, errorLimit: errorLimit)
        while collector.pump() {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                collector.result.timedOut = true
                break
            }
            var p = pollfd(fd: collector.readiness, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, ContinuousClock.now.duration(to: collector.nextLook(deadline)).roundedUpMilliseconds)
        }
        if collector.result.timedOut || collector.result.outputTooLarge { signal(SIGKILL, toGroup: false) }
        var result = collector.finish()
        if !result.timedOut && !result.outputTooLarge, let ending = waitForExit(by: deadline) {
            result.ending = ending
            return result
        }
        result.timedOut = !result.outputTooLarge
        signal(SIGKILL, toGroup: false)
        result.ending = waitForExit() ?? .signaled(SIGKILL)
        return result
    }
}

extension Spawn {
    /// Starts the child.
    public func start() throws(Failure) -> Child {
        Child(pid: try startProcess(), headsGroup: newProcessGroup)
    }

    /// Starts a child on `lifelong`'s thread.
    public func startFromLifelongThread() async throws -> Child {
        let request = self
        let pid = try await Self.lifelong.run { () throws -> pid_t in try request.startProcess() }
        return Child(pid: pid, headsGroup: newProcessGroup)
    }
}

extension Duration {
    /// Whole milliseconds, rounded up (a wait that ends early only waits
    /// again), for `poll`.
    var roundedUpMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
