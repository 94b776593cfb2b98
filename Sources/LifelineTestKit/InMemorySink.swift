import Glibc
import LifelineCore
import Synchronization

/// A sink that remembers every update it took, for tests and benchmarks
/// (like swift-log's `InMemoryLogHandler`). It can also be told to hang.
public final class InMemorySink: Sink {
    public struct Config: Codable, Sendable {
        /// Take the first update, then block the thread in a system call until
        /// `blocker.release()`: a sink stuck inside a synchronous C call.
        public var hang: Bool = false
        public init(hang: Bool = false) { self.hang = hang }
    }

    public static let kind = "memory"
    public static let summary = "Keeps every update in memory (tests)."

    private let config: Config
    private let received = Mutex<[Update]>([])
    /// What a hanging sink is blocked on.
    public let blocker = ThreadBlocker()

    public init(config: Config = Config(), context: PluginContext? = nil) {
        self.config = config
    }

    public convenience init(config: Config, context: PluginContext) throws {
        self.init(config: config, context: Optional(context))
    }

    public func run(updates: SinkUpdates) async throws {
        if config.hang {
            // Stuck like a sink blocked on a dead server: it holds its thread,
            // which `Task.sleep` would not.
            var iterator = updates.makeAsyncIterator()
            if let first = await iterator.next() { received.withLock { $0.append(first) } }
            blocker.block()
            return
        }
        for await update in updates {
            received.withLock { $0.append(update) }
        }
    }

    public var updates: [Update] { received.withLock { $0 } }
    public var transitions: [StateEvent] { updates.filter(\.isTransition).map(\.event) }
    public var states: [ConnectivityState] { transitions.map(\.state) }
}

/// Blocks the calling thread for real (a `read` on a pipe nobody writes to)
/// until released.
public final class ThreadBlocker: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let blocked = Atomic<Bool>(false)

    public init() {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe failed")
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    /// Whether a thread is blocked in `block()` now.
    public var isBlocking: Bool { blocked.load(ordering: .acquiring) }

    public func block() {
        blocked.store(true, ordering: .releasing)
        var byte: UInt8 = 0
        _ = read(readEnd, &byte, 1)
        blocked.store(false, ordering: .releasing)
    }

    /// Lets every blocked (and future) `block()` return.
    public func release() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}
