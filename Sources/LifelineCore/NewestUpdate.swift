import Synchronization

/// The newest update a sink's worker has not taken yet. A newer one replaces
/// it, but stays a transition if either was, as a coalescing mailbox does: a
/// transition must not hide behind an attribute change that followed it.
public final class NewestUpdate: Sendable {
    private let slot = Mutex<Update?>(nil)

    public init() {}

    /// Stores `update`; true when the slot was empty (the taker needs a nudge).
    @discardableResult
    public func put(_ update: Update) -> Bool {
        slot.withLock { waiting in
            guard waiting != nil else {
                waiting = update
                return true
            }
            waiting?.replace(with: update)
            return false
        }
    }

    public func take() -> Update? {
        slot.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }
    }
}
