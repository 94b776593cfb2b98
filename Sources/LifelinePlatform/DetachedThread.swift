import Glibc

/// A POSIX thread that runs one closure and ends, joined by no one: for a
/// blocking call whose caller may stop waiting for it (a name lookup, a
/// `poll` outside the daemon). The closure holds what it captures until it
/// returns, so the caller may go away first.
public enum DetachedThread {
    /// Starts `body` on a thread of its own; false if no thread could start.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let retained = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, retained)
        guard started == 0 else {
            Unmanaged<Body>.fromOpaque(retained).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Runs `body` on a thread of its own and waits for it without holding a
    /// thread of the pool (a config reload: a parser child and its reaping).
    /// Where no thread can start, runs it here rather than not at all.
    public static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            let started = start {
                continuation.resume(returning: Result { () throws(E) -> T in try body() })
            }
            if !started { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
