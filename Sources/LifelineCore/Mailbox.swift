import Synchronization

/// How a sink's mailbox holds updates the sink has not taken yet.
public enum DeliveryPolicy: Sendable, Equatable {
    /// Only the newest update waits: right for anything that shows
    /// the current state (toast, tmux, D-Bus).
    case latest
    /// Every transition waits, up to `capacity`; attribute-only updates still
    /// coalesce. For the log, where nothing published may be missing. Past the
    /// capacity the oldest are dropped and counted, so a hung disk cannot grow
    /// memory without bound.
    case everyTransition(capacity: Int)
}

/// One sink's inbox. The bus posts without ever waiting; the sink takes at its
/// own pace. A sink that hangs forever costs one `Update` (or `capacity`) of memory.
public final class Mailbox: Sendable {
    public let policy: DeliveryPolicy

    private struct State {
        var queue: [Update] = []
        /// The sink, parked until a post (or the end) gives it something to take.
        var waiter: CheckedContinuation<Void, Never>?
        var lastTaken: Update?
        var dropped = 0
        var closed = false
        /// Takes no more posts; what waits is still handed out, then `next` ends.
        var finished = false
    }

    private let state = Mutex(State())

    public init(policy: DeliveryPolicy) {
        self.policy = policy
    }

    /// Never blocks: stores the update and wakes the sink if it is parked.
    ///
    /// The update waits in the queue even when the sink is parked: the sink
    /// takes from the queue once it runs, so a put that comes between its wake-up
    /// and its run coalesces into what it takes (it sees the newest, not the one
    /// that woke it, then the newest), and only the put that finds it parked
    /// resumes it; the others find no waiter and cost no resume.
    public func post(_ update: Update) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.closed || s.finished { return nil }
            switch policy {
            case .latest:
                if !s.queue.isEmpty {
                    s.queue[0].replace(with: update)
                } else {
                    s.queue.append(update)
                }
            case .everyTransition(let capacity):
                if let older = s.queue.last, !older.isTransition {
                    // An attribute-only update never needs to be seen on its own;
                    // a waiting transition is kept exactly as it was published.
                    s.queue[s.queue.count - 1].replace(with: update)
                } else {
                    s.queue.append(update)
                    if s.queue.count > capacity {
                        s.queue.removeFirst(s.queue.count - capacity)
                        s.dropped += 1
                    }
                }
            }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// The next update, waiting if there is none; nil once closed or cancelled.
    public func next() async -> Update? {
        if let ready = takeReady() { return ready }
        // Once more after the tasks ready now have run: a bus publishing in a
        // burst has often posted again by then, and a sink that takes it without
        // parking costs the bus no resume (and its thread no wake-up). A yield
        // delays nothing: what waits now was taken above.
        await Task.yield()
        if let ready = takeReady() { return ready }
        return await withTaskCancellationHandler {
            while true {
                var taken: Update??
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    taken = take(orPark: continuation)
                    if taken != nil { continuation.resume() }
                }
                if let taken { return taken }
            }
        } onCancel: {
            let waiter = state.withLock { s in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
    }

    /// The first update that waits, `.some(nil)` once the sequence has ended,
    /// nil if the sink must wait. With a continuation, a sink that must wait is
    /// parked in the same lock, so no post can come between the look and the park.
    private func take(orPark continuation: CheckedContinuation<Void, Never>) -> Update?? {
        state.withLock { s -> Update?? in
            if s.closed || Task.isCancelled { return .some(nil) }
            if !s.queue.isEmpty {
                let u = s.queue.removeFirst()
                s.lastTaken = u
                return .some(u)
            }
            if s.finished { return .some(nil) }
            s.waiter = continuation
            return nil
        }
    }

    private func takeReady() -> Update? {
        state.withLock { s in
            guard !s.queue.isEmpty else { return nil }
            let u = s.queue.removeFirst()
            s.lastTaken = u
            return u
        }
    }

    /// Up to `limit` updates that already wait, without waiting for more: a sink
    /// that writes in batches (the log: one fsync for a burst) takes them with the one `next` gave it.
    public func takeWaiting(limit: Int) -> [Update] {
        state.withLock { s in
            let taken = Array(s.queue.prefix(max(limit, 0)))
            s.queue.removeFirst(taken.count)
            if let last = taken.last { s.lastTaken = last }
            return taken
        }
    }

    /// Puts the last update the sink took back in front, so a sink restarted by
    /// its supervisor starts from the current state.
    public func replayLast() {
        state.withLock { s in
            if s.queue.isEmpty, let last = s.lastTaken { s.queue.append(last) }
        }
    }

    /// How many transitions were dropped for lack of room since the last call.
    public func takeDroppedCount() -> Int {
        state.withLock { s in
            defer { s.dropped = 0 }
            return s.dropped
        }
    }

    /// Number of updates waiting (for tests and benchmarks).
    public var backlog: Int { state.withLock { $0.queue.count } }

    /// Ends the sequence at once, dropping what waits (daemon shutdown).
    public func close() {
        let waiter = state.withLock { s in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Takes no more posts, but hands out what already waits before the sequence
    /// ends: a sink being replaced (config reload) writes every transition that
    /// reached it.
    public func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            guard s.queue.isEmpty else { return nil }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Whether `finish()` or `close()` ended it.
    public var isEnded: Bool { state.withLock { $0.closed || $0.finished } }
}

/// The sequence a sink reads: `for await update in updates { … }`.
public struct SinkUpdates: AsyncSequence, Sendable {
    public typealias Element = Update
    let mailbox: Mailbox

    public init(_ mailbox: Mailbox) { self.mailbox = mailbox }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox
        public mutating func next() async -> Update? { await mailbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(mailbox: mailbox) }

    /// Transitions dropped because the sink fell more than its capacity behind.
    public func takeDroppedCount() -> Int { mailbox.takeDroppedCount() }

    /// Up to `limit` updates that already wait, without waiting for more.
    public func takeWaiting(limit: Int) -> [Update] { mailbox.takeWaiting(limit: limit) }
}
