import Synchronization

/// `NameOwner` for a signal handler: it runs on the loop thread for every
/// message addressed to the connection, and decides there, from the header
/// alone, whether the message goes any further. A stranger's message is
/// dropped before a single argument is read and before it is queued for
/// anyone, so what strangers send costs neither memory nor a queue's place.
///
/// The owner is learnt from the bus: `NameOwnerChanged` here, and the answer
/// to `GetNameOwner` (asked after subscribing) through `learned(owner:)`,
/// which yields to any change the bus announced meanwhile.
public final class OwnerGate: Sendable {
    public enum Admission: Sendable, Equatable {
        /// The bus said the name has a new owner (empty: none).
        case ownerChanged(NameOwnerChange)
        /// Sent by the name's current owner.
        case fromOwner
        /// Anyone else: drop it unread.
        case stranger
    }

    private struct Known {
        var owner: NameOwner
        var changedByBus = false
    }

    private let known: Mutex<Known>

    public init(_ name: String) {
        known = Mutex(Known(owner: NameOwner(name)))
    }

    public var name: String { known.withLock { $0.owner.name } }
    public var owner: String? { known.withLock { $0.owner.owner } }
    public var matchRule: String { known.withLock { $0.owner.matchRule } }

    public func admit(_ message: BusMessage) -> Admission {
        known.withLock { k in
            if let change = k.owner.follow(message) {
                k.changedByBus = true
                return .ownerChanged(change)
            }
            return k.owner.sent(message) ? .fromOwner : .stranger
        }
    }

    /// The owner `GetNameOwner` answered, unless `NameOwnerChanged` told a
    /// newer one since.
    public func learned(owner: String?) {
        known.withLock { k in
            if !k.changedByBus { k.owner.owner = owner }
        }
    }
}
