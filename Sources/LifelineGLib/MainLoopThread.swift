import CGLib
import Glibc
import Synchronization

/// One GLib main loop on a thread of its own, with its `GMainContext` pushed as
/// the thread-default context there: GLib libraries (libnotify, GDBus) bind
/// their callbacks to the context that is thread-default where they start, and
/// would otherwise never call back. libdbus runs on `MainLoopThread.shared`
/// (through `BusConnection`), so there is no blocking dispatch thread to delay
/// its sends. Nothing that can block for long may run on a loop that others
/// use: libnotify, whose calls wait up to 25 s for a hung server, has a loop of
/// its own.
///
/// Code outside the loop hands work to it:
/// - `perform { }` queues a closure and returns at once (FIFO order is kept);
/// - `sync { }` runs a closure on the loop and waits for its result (inline when
///   already on the loop thread, so it cannot deadlock itself);
/// - `run { }` is the `async` form of `sync`.
/// Timers and fd watches (`addTimeout`, `addWatch`) call back on the loop thread.
///
/// A loop thread runs until `stop()`; the shared ones run for the life of the process.
public final class MainLoopThread: @unchecked Sendable {
    /// The process-wide loop that libdbus runs on, started on first use.
    public static let shared = MainLoopThread(name: "lifeline-glib")

    /// The loop of the system bus's clients (the NetworkManager and logind
    /// monitors), started on first use: whatever another user sends on the
    /// system bus is dropped there and never waits on the loop that serves the
    /// daemon's session interface, and the two clients share one thread.
    public static let systemBus = MainLoopThread(name: "lifeline-sysbus")

    /// The `GMainContext *` of this loop, for wrappers in this package that
    /// attach their own sources (libdbus watches). Never leaves the package.
    package let context: OpaquePointer
    private let loop: OpaquePointer
    private let queue = Mutex<Queue>(Queue())
    /// The `GThread *` (g_thread_new names the thread, which shows in `top -H`).
    private var thread: UnsafeMutablePointer<GThread>?

    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        /// An idle source is attached and will drain `jobs`.
        var scheduled = false
        var stopped = false
    }

    public convenience init(name: String) {
        self.init(name: name, context: g_main_context_new())
    }

    /// A loop on GLib's global default context, for a library that queues its
    /// own work there (g_idle_add, g_timeout_add) whatever context is
    /// thread-default: libdbusmenu-glib sends its signals and handles menu clicks
    /// that way, and without a loop on that context they never happen. At most
    /// one such loop may run in the process.
    public convenience init(nameOnDefaultContext name: String) {
        self.init(name: name, context: g_main_context_ref(g_main_context_default()))
    }

    /// `context`: one reference, which the loop keeps.
    private init(name: String, context: OpaquePointer) {
        self.context = context
        loop = g_main_loop_new(context, 0)
        let start = ThreadStart(context: context, loop: loop)
        let box = Unmanaged.passRetained(start).toOpaque()
        // g_thread_new aborts if it cannot start a thread: nothing to handle here.
        thread = g_thread_new(name, { raw in
            let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
            start.body()
            return nil
        }, box)
        // Wait until the loop owns its context, so `isCurrent` and `sync` are
        // right from the first call.
        start.ready.wait()
    }

    /// True on the loop's own thread (while it runs).
    public var isCurrent: Bool { g_main_context_is_owner(context) != 0 }

    /// Runs `body` on the loop thread, after everything performed before it.
    /// After `stop()` the closure is dropped.
    public func perform(_ body: @escaping @Sendable () -> Void) {
        let schedule = queue.withLock { q -> Bool in
            if q.stopped { return false }
            q.jobs.append(body)
            if q.scheduled { return false }
            q.scheduled = true
            return true
        }
        guard schedule else { return }
        let source = g_idle_source_new()!
        g_source_set_priority(source, LIFELINE_G_PRIORITY_DEFAULT)
        g_source_set_callback(source, { raw in
            let me = Unmanaged<MainLoopThread>.fromOpaque(raw!).takeUnretainedValue()
            me.drain()
            return LIFELINE_G_SOURCE_REMOVE
        }, Unmanaged.passRetained(self).toOpaque(), { raw in
            Unmanaged<MainLoopThread>.fromOpaque(raw!).release()
        })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    private func drain() {
        while true {
            let jobs = queue.withLock { q -> [@Sendable () -> Void] in
                defer { q.jobs.removeAll(keepingCapacity: true) }
                if q.jobs.isEmpty { q.scheduled = false }
                return q.jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }

    /// Runs `body` on the loop thread and returns its result; inline when called there.
    /// After `stop()` the thread is gone and `body` runs on the caller's thread
    /// (so owners can still release what they attached).
    public func sync<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isCurrent || queue.withLock({ $0.stopped }) { return try body() }
        return try withoutActuallyEscaping(body) { (escapable) throws(E) -> T in
            let box = UnsafeTransfer<(job: (() throws(E) -> T)?, result: Result<T, E>?)>((escapable, nil))
            let done = Semaphore()
            perform {
                box.value.result = Result { () throws(E) -> T in try box.value.job!() }
                // The closure must not outlive `withoutActuallyEscaping`.
                box.value.job = nil
                done.signal()
            }
            done.wait()
            return try box.value.result!.get()
        }
    }

    /// Runs `body` on the loop thread and resumes with its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if isCurrent { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            perform { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Calls `body` on the loop thread every `interval` until it returns false or
    /// the source is cancelled.
    @discardableResult
    public func addTimeout(_ interval: Duration, _ body: @escaping @Sendable () -> Bool) -> LoopSource {
        let ms = UInt32(clamping: max(0, interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000))
        let source = g_timeout_source_new(ms)!
        g_source_set_callback(source, { raw in
            let box = Unmanaged<CallbackBox<() -> Bool>>.fromOpaque(raw!).takeUnretainedValue()
            return box.body() ? LIFELINE_G_SOURCE_CONTINUE : LIFELINE_G_SOURCE_REMOVE
        }, Unmanaged.passRetained(CallbackBox<() -> Bool>(body)).toOpaque(), { raw in
            Unmanaged<CallbackBox<() -> Bool>>.fromOpaque(raw!).release()
        })
        return LoopSource(attaching: source, to: context)
    }

    /// Events for `addWatch`.
    public struct IOEvents: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = IOEvents(rawValue: G_IO_IN.rawValue)
        public static let writable = IOEvents(rawValue: G_IO_OUT.rawValue)
        public static let error = IOEvents(rawValue: G_IO_ERR.rawValue)
        public static let hangup = IOEvents(rawValue: G_IO_HUP.rawValue)
    }

    /// Calls `body` on the loop thread whenever `fd` has one of `events` (errors
    /// and hang-ups are always reported) until it returns false or the source is
    /// cancelled. The fd stays the caller's to close, after cancelling.
    @discardableResult
    public func addWatch(fd: Int32, events: IOEvents, _ body: @escaping @Sendable (IOEvents) -> Bool) -> LoopSource {
        let condition = GIOCondition(rawValue: events.union([.error, .hangup]).rawValue)
        let source = g_unix_fd_source_new(fd, condition)!
        lifeline_g_fd_source_set_callback(source, { _, condition, raw in
            let box = Unmanaged<CallbackBox<(IOEvents) -> Bool>>.fromOpaque(raw!).takeUnretainedValue()
            return box.body(IOEvents(rawValue: condition.rawValue)) ? LIFELINE_G_SOURCE_CONTINUE : LIFELINE_G_SOURCE_REMOVE
        }, Unmanaged.passRetained(CallbackBox<(IOEvents) -> Bool>(body)).toOpaque(), { raw in
            Unmanaged<CallbackBox<(IOEvents) -> Bool>>.fromOpaque(raw!).release()
        })
        return LoopSource(attaching: source, to: context)
    }

    /// Quits the loop and joins its thread. Work still queued is dropped.
    /// Call it from another thread; the shared loop is never stopped.
    public func stop() {
        precondition(!isCurrent, "MainLoopThread.stop() called on its own thread")
        let already = queue.withLock { q in
            defer { q.stopped = true; q.jobs = [] }
            return q.stopped
        }
        if already { return }
        g_main_loop_quit(loop)
        g_main_context_wakeup(context)
        if let thread { _ = g_thread_join(thread) }
        thread = nil
    }

    deinit {
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }
}

/// A source attached to a `MainLoopThread` (timer or fd watch). `cancel()`
/// detaches it; after it returns on the loop thread, the callback will not run again.
public final class LoopSource: @unchecked Sendable {
    private let source: UnsafeMutablePointer<GSource>

    fileprivate init(attaching source: UnsafeMutablePointer<GSource>, to context: OpaquePointer) {
        self.source = source
        g_source_attach(source, context)
    }

    public func cancel() { g_source_destroy(source) }

    public var isCancelled: Bool { g_source_is_destroyed(source) != 0 }

    deinit { g_source_unref(source) }
}

private final class ThreadStart: @unchecked Sendable {
    let context: OpaquePointer
    let loop: OpaquePointer
    let ready = Semaphore()

    init(context: OpaquePointer, loop: OpaquePointer) {
        self.context = context
        self.loop = loop
    }

    func body() {
        g_main_context_push_thread_default(context)
        // Own the context before anyone may ask `isCurrent`; g_main_loop_run
        // acquires it again (recursively) and keeps it while it runs.
        g_main_context_acquire(context)
        ready.signal()
        g_main_loop_run(loop)
        g_main_context_release(context)
        g_main_context_pop_thread_default(context)
    }
}

private final class CallbackBox<Body>: @unchecked Sendable {
    let body: Body
    init(_ body: Body) { self.body = body }
}

/// Moves a value into a `@Sendable` closure when the caller guarantees the
/// hand-off is safe (here: `sync` waits for the closure before it returns).
private final class UnsafeTransfer<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A counting semaphore on a pthread mutex and condition (no Foundation/Dispatch).
final class Semaphore: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        count += 1
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    func wait() {
        pthread_mutex_lock(mutex)
        while count == 0 { pthread_cond_wait(cond, mutex) }
        count -= 1
        pthread_mutex_unlock(mutex)
    }
}
