import Synchronization

/// A continuation resumed by whichever of several racers comes first (a task
/// that ends, a time limit); the later ones find it gone. `set` comes before
/// any racer starts.
public final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    public init() {}

    public func set(_ c: CheckedContinuation<Value, Never>) { continuation.withLock { $0 = c } }

    public func resume(_ value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }
}
