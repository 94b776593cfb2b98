import Glibc

/// A POSIX thread that runs one closure and ends, joined by no one: for a
/// blocking call whose caller may stop waiting for it (a name lookup, a
/// `poll` outside the daemon). Tasks use it through `Blocking.run`. The closure holds what it captures until it
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

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
