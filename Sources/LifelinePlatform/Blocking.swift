import Glibc

/// The one way a task makes a one-off call that truly blocks (a config
/// reload and its parser child, a bus's `Hello`, reading the event log for the
/// tray): on a thread of its own, `lifeline-block`, which ends with the call,
/// so no thread of the pool waits. What must keep an order stays on a
/// `SerialThread` (the log's and the state file's writes and `fsync`, a hook's
/// lane, libcurl's easy API one probe at a time); libnotify's calls run on its
/// GLib loop. What only looks like a wait (a child's exit, a folder change, a
/// lookup's answer) is a descriptor instead, awaited through `DescriptorWaiting`.
public enum Blocking {
    /// Runs `body` on a thread of its own and waits for it without holding a
    /// thread of the pool (a config reload: a parser child and its reaping).
    /// Where no thread can start, runs it here rather than not at all.
    public static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            let started = DetachedThread.start {
                nameThisThread(name: "lifeline-block")
                continuation.resume(returning: Result { () throws(E) -> T in try body() })
            }
            if !started { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// `run`, but a cancelled caller goes on at once with nil, and the call
    /// finishes on its thread, its result dropped (connecting to a bus that
    /// never answers).
    public static func runUnlessCancelled<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
        if Task.isCancelled { return nil }
        let once = ResumeOnce<T?>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.set(continuation)
                let started = DetachedThread.start {
                    nameThisThread(name: "lifeline-block")
                    once.resume(body())
                }
                if !started { once.resume(body()) }
            }
        } onCancel: {
            once.resume(nil)
        }
    }

    private static func nameThisThread(name: String) {
        // pthread_setname_np is not visible from Swift; the kernel takes the name here too.
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard comm >= 0 else { return }
        _ = try? Files.writeAll(comm, name.utf8.prefix(15), path: "/proc/thread-self/comm")
        close(comm)
    }
}
