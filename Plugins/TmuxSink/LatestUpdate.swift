import LifelineCore
import Synchronization

/// The newest update not handled yet. It replaces older ones but keeps their
/// `isTransition`, as the mailbox does: a transition must not hide behind an
/// attribute change that followed it (the alert looks at it).
final class LatestUpdate: Sendable {
    private let slot = Mutex<Update?>(nil)
    func put(_ update: Update) {
        slot.withLock { waiting in
            var newest = update
            newest.isTransition = update.isTransition || (waiting?.isTransition ?? false)
            waiting = newest
        }
    }
    func take() -> Update? {
        slot.withLock { u in
            defer { u = nil }
            return u
        }
    }
}
