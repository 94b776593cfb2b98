import CEpoll
import Glibc
import Synchronization

/// What ended a wait for a descriptor.
public enum DescriptorWait: Sendable, Equatable {
    /// The descriptor has one of the events asked for, or an error or a
    /// hang-up: the next call on it says which.
    case ready
    case timedOut
    /// The waiting task was cancelled.
    case cancelled
}

/// Waits for a descriptor without holding a thread while it waits.
///
/// In the daemon the waits are watched by the threads that run its tasks
/// (`DescriptorWaiting.install`): a probe's socket then wakes the process
/// once, on the thread that goes on with the task, instead of waking a
/// thread of its own that then wakes another to hand its result over.
/// Elsewhere (the command line, tests) each wait is a `poll` on a short-lived
/// thread of its own.
public protocol DescriptorWaiter: Sendable {
    /// Waits until `fd` has one of `events` (`POLLIN`, `POLLOUT`), until
    /// `deadline` passes, or until the calling task is cancelled, whichever
    /// comes first.
    func wait(for fd: Int32, events: Int16, until deadline: ContinuousClock.Instant) async -> DescriptorWait
}

/// The process's `DescriptorWaiter`.
public enum DescriptorWaiting {
    private static let installed = Mutex<(any DescriptorWaiter)?>(nil)

    /// The one installed, else a `PollingThreadWaiter`.
    public static var current: any DescriptorWaiter {
        installed.withLock { $0 } ?? PollingThreadWaiter()
    }

    /// Makes `waiter` the one every later wait goes through; the daemon calls
    /// it once, at start.
    public static func install(_ waiter: any DescriptorWaiter) {
        installed.withLock { $0 = waiter }
    }
}

/// Waits with one `poll` on a detached thread per wait, cut short through an
/// eventfd when the task is cancelled. For processes that run few waits (the
/// command line, tests); the daemon installs its own.
public struct PollingThreadWaiter: DescriptorWaiter {
    public init() {}

    public func wait(for fd: Int32, events: Int16, until deadline: ContinuousClock.Instant) async -> DescriptorWait {
        if Task.isCancelled { return .cancelled }
        guard let poller = PollOnThread(fd: fd, events: events, deadline: deadline) else {
            // No eventfd or no thread (out of descriptors or memory): nothing
            // can be waited for, and the caller's next call on `fd` says what
            // its state is.
            return .ready
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if !poller.start(continuation) { continuation.resume(returning: .ready) }
            }
        } onCancel: {
            poller.cancel()
        }
    }
}

/// One wait of a `PollingThreadWaiter`; its thread holds it until the wait ends.
private final class PollOnThread: Sendable {
    let fd: Int32
    let events: Int16
    let deadline: ContinuousClock.Instant
    /// Readable once the task is cancelled.
    let cancelled: Int32

    init?(fd: Int32, events: Int16, deadline: ContinuousClock.Instant) {
        cancelled = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard cancelled >= 0 else { return nil }
        self.fd = fd
        self.events = events
        self.deadline = deadline
    }

    deinit {
        close(cancelled)
    }

    func cancel() {
        _ = eventfd_write(cancelled, 1)
    }

    /// Starts the thread that resumes `continuation`; false if none could start.
    func start(_ continuation: CheckedContinuation<DescriptorWait, Never>) -> Bool {
        DetachedThread.start { [self] in continuation.resume(returning: poll()) }
    }

    private func poll() -> DescriptorWait {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timedOut }
            // Rounded up: a wait that ends before the deadline would only wait again.
            let ms = Int32(clamping: Int(left.milliseconds.rounded(.up)))
            var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: cancelled, events: Int16(POLLIN), revents: 0)]
            let n = Glibc.poll(&fds, 2, ms)
            if n < 0 {
                if errno == EINTR { continue }
                return .ready  // the caller's next call on `fd` says what is wrong
            }
            if fds[1].revents != 0 { return .cancelled }
            if fds[0].revents != 0 { return .ready }
        }
    }
}
