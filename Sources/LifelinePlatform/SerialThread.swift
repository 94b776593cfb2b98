import Glibc
import Synchronization

/// A thread of its own for blocking calls that must keep an order (fsync, a
/// write to a slow disk, a synchronous C library), so they never hold one of the
/// few threads of the pool, where the debounce timer and every other task run.
/// A one-off call goes through `Blocking.run` instead.
///
/// Closures submitted with `run` execute one at a time, in the order submitted,
/// on one named POSIX thread; the awaiting task resumes when its closure is
/// done. State that only these closures touch needs no lock.
///
///     let disk = SerialThread(name: "lifeline-log")
///     try await disk.run { try file.append(line) }
///     disk.stop()
public final class SerialThread: @unchecked Sendable {
    // @unchecked: `wakeUp` is a POSIX semaphore, made to be shared between
    // threads; everything else is behind the mutex.
    public let name: String
    private let jobs = Mutex(Jobs())
    private let wakeUp: UnsafeMutablePointer<sem_t>

    private struct Jobs {
        var queue: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// Thrown by `run` after `stop()`.
    public struct Stopped: Error, CustomStringConvertible {
        public var name: String
        public var description: String { "thread \(name) has stopped" }
    }

    /// Starts the thread. `name` shows in `ps -L` and `top -H` (the kernel keeps
    /// its first 15 bytes).
    public init(name: String) {
        self.name = name
        wakeUp = .allocate(capacity: 1)
        sem_init(wakeUp, 0, 0)
        // The thread holds the object until it ends, so `stop()` is what frees it.
        let retained = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            let me = Unmanaged<SerialThread>.fromOpaque(argument!).takeRetainedValue()
            me.loop()
            return nil
        }, retained)
        if started == 0 {
            pthread_detach(thread)
        } else {
            // No thread: every `run` fails with `Stopped` instead of waiting forever.
            Unmanaged<SerialThread>.fromOpaque(retained).release()
            jobs.withLock { $0.stopping = true }
        }
    }

    deinit {
        sem_destroy(wakeUp)
        wakeUp.deallocate()
    }

    /// Runs `body` on the thread after everything submitted before it and returns
    /// its result (or throws its error). If the calling task is cancelled the
    /// caller resumes at once with `CancellationError`; a `body` that has started
    /// runs to its end all the same (a blocked system call cannot be taken back).
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let outcome = Outcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard outcome.wait(continuation) else { return }
                let accepted = submit {
                    guard outcome.isWaiting else { return }  // cancelled before it started
                    outcome.finish(Result { try body() })
                }
                if !accepted { outcome.finish(.failure(Stopped(name: name))) }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// Queues `body` without waiting for it: for a loop that runs on the thread
    /// until told to stop some other way. False once the thread has stopped.
    @discardableResult
    public func perform(_ body: @escaping @Sendable () -> Void) -> Bool {
        submit(body)
    }

    /// Ends the thread once the work already submitted is done; later `run`
    /// calls throw `Stopped`. Does not wait.
    public func stop() {
        let wasRunning = jobs.withLock { j in
            defer { j.stopping = true }
            return !j.stopping
        }
        if wasRunning { sem_post(wakeUp) }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = jobs.withLock { j in
            guard !j.stopping else { return false }
            j.queue.append(job)
            return true
        }
        if accepted { sem_post(wakeUp) }
        return accepted
    }

    private func loop() {
        // pthread_setname_np is not visible from Swift; the kernel takes the name here too.
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if comm >= 0 {
            _ = try? Files.writeAll(comm, name.utf8.prefix(15), path: "/proc/thread-self/comm")
            close(comm)
        }
        while true {
            while sem_wait(wakeUp) != 0 {}  // EINTR: wait again
            let next: (@Sendable () -> Void)?? = jobs.withLock { j in
                if !j.queue.isEmpty { return .some(j.queue.removeFirst()) }
                return j.stopping ? .some(nil) : .none
            }
            switch next {
            case .some(.some(let job)): job()
            case .some(.none): return
            case .none: continue
            }
        }
    }
}

/// One `run` call's result, delivered exactly once: by the thread when the body
/// ends, or by cancellation, whichever comes first.
private final class Outcome<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<T, any Error>)
        case done
    }

    private let state = Mutex(State.idle)

    /// Registers the caller; false (and the caller already resumed) when
    /// cancellation came first.
    func wait(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let cancelled = state.withLock { s in
            if case .done = s { return true }
            s = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    var isWaiting: Bool {
        state.withLock { s in
            if case .waiting = s { return true }
            return false
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { s in
            defer { s = .done }
            if case .waiting(let c) = s { return c }
            return nil
        }
        continuation?.resume(with: result)
    }
}
