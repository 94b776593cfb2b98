import Glibc

/// Runs one blocking call on a thread of its own and resumes the caller with
/// its result, so that neither the cooperative pool nor the loop thread waits
/// for it (connecting to a bus blocks until the bus answers `Hello`).
enum DedicatedThread {
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let job = Job { continuation.resume(returning: body()) }
            let raw = Unmanaged.passRetained(job).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(&thread, nil, { raw in
                Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, raw)
            if started == 0 {
                pthread_detach(thread)
            } else {
                // No thread to be had: better late on this one than never.
                Unmanaged<Job>.fromOpaque(raw).takeRetainedValue().body()
            }
        }
    }

    private final class Job: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
