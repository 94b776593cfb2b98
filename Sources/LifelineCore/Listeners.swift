/// The streams the bus tells something (the path's changes, check requests,
/// job requests), each until its reader goes away. The bus keeps them under its
/// lock and yields outside it: ending a stream calls back into the bus.
struct Listeners<Element: Sendable> {
    private var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { continuations.isEmpty }

    /// Every listener, to be told outside the lock.
    var all: [AsyncStream<Element>.Continuation] { Array(continuations.values) }

    /// Returns the id to `remove` it by.
    mutating func add(_ continuation: AsyncStream<Element>.Continuation) -> UInt64 {
        lastID += 1
        continuations[lastID] = continuation
        return lastID
    }

    mutating func remove(_ id: UInt64) {
        continuations[id] = nil
    }

    /// Forgets every listener and returns them, to be finished outside the lock.
    mutating func removeAll() -> [AsyncStream<Element>.Continuation] {
        defer { continuations = [:] }
        return all
    }
}
