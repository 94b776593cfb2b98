/// Who may speak for a well-known name: the unique name that owns it now.
///
/// A match rule's `sender='org.freedesktop.NetworkManager'` filters only the
/// signals that are broadcast. A signal sent *to* this connection (it carries
/// a destination) is delivered whatever the match rules say, and the system
/// bus lets every local user send signals. So a signal counts only when its
/// sender, which the bus itself writes into every message, is the name's
/// current owner. The owner is learnt from the bus alone: `GetNameOwner` once,
/// then `NameOwnerChanged`, itself believed only from `org.freedesktop.DBus`.
///
///     var nm = NameOwner(NetworkManagerClient.name)
///     try await connection.subscribe(to: nm.matchRule)      // first, so no change is missed
///     nm.owner = try await connection.owner(of: nm.name)
///     …
///     if let change = nm.follow(message) { … }              // it came, it left
///     else if nm.sent(message) { … }                        // a signal to believe
public struct NameOwner: Sendable, Equatable {
    public let name: String
    /// The owner's unique name (":1.42"); nil while no one owns the name (or
    /// before the bus said who does).
    public var owner: String?

    public init(_ name: String, owner: String? = nil) {
        self.name = name
        self.owner = owner
    }

    /// Whether `message` was sent by the name's current owner.
    public func sent(_ message: BusMessage) -> Bool {
        guard let owner, let sender = message.sender else { return false }
        return sender == owner
    }

    /// Takes `message` when it is the bus announcing a new owner for this name,
    /// and returns that change; nil for any other message, including a
    /// `NameOwnerChanged` that some other peer sent.
    public mutating func follow(_ message: BusMessage) -> NameOwnerChange? {
        guard let change = NameOwnerChange(message), change.name == name else { return nil }
        owner = change.newOwner.isEmpty ? nil : change.newOwner
        return change
    }

    /// The rule that brings this name's `NameOwnerChanged` here.
    public var matchRule: String { NameOwnerChange.matchRule(name: name) }
}

/// `org.freedesktop.DBus.NameOwnerChanged(name, old owner, new owner)`, as the
/// bus sent it. Any peer can send a signal of that name to any connection;
/// only the bus's own counts.
public struct NameOwnerChange: Sendable, Equatable {
    public var name: String
    public var oldOwner: String
    /// Empty when the name was released (its owner left the bus).
    public var newOwner: String

    public init(name: String, oldOwner: String, newOwner: String) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }

    /// Nil unless `message` is a well-formed `NameOwnerChanged` from the bus itself.
    public init?(_ message: BusMessage) {
        guard message.kind == .signal, message.sender == BusConnection.busName,
              message.is(interface: BusConnection.busName, member: "NameOwnerChanged", signature: "sss"),
              let args = try? message.arguments(), args.count == 3,
              let name = args[0].string, let old = args[1].string, let new = args[2].string
        else { return nil }
        self.init(name: name, oldOwner: old, newOwner: new)
    }

    /// The rule for the bus's `NameOwnerChanged`, about `name` only when given.
    public static func matchRule(name: String? = nil) -> String {
        let rule = "type='signal',sender='\(BusConnection.busName)',interface='\(BusConnection.busName)',member='NameOwnerChanged'"
        return name.map { rule + ",arg0='\($0)'" } ?? rule
    }
}

extension BusConnection {
    /// The unique name that owns `name` now (`GetNameOwner`), nil when no one
    /// does. Asynchronous (needs `attach(to:)`).
    public func owner(of name: String, timeout: Duration = .seconds(10)) async throws(BusError) -> String? {
        do {
            return try await call(Self.getNameOwner(name), timeout: timeout).arguments().first?.string
        } catch where error.name == BusError.nameHasNoOwner {
            return nil
        }
    }

    /// `owner(of:)` for a connection that is not attached to a loop (the CLI).
    public func ownerBlocking(of name: String, timeout: Duration = .seconds(10)) throws(BusError) -> String? {
        do {
            return try callBlocking(Self.getNameOwner(name), timeout: timeout).arguments().first?.string
        } catch where error.name == BusError.nameHasNoOwner {
            return nil
        }
    }

    private static func getNameOwner(_ name: String) throws(BusError) -> BusMessage {
        let m = try BusMessage.methodCall(destination: busName, path: busPath, interface: busName, member: "GetNameOwner")
        try m.append(.string(name))
        return m
    }

    /// Adds a match rule with an asynchronous `AddMatch` (needs `attach(to:)`):
    /// a bus that is slow to answer holds no thread, where `addMatch` would
    /// block the caller for up to libdbus's 25 s.
    public func subscribe(to rule: String, timeout: Duration = .seconds(10)) async throws(BusError) {
        let m = try BusMessage.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                          member: "AddMatch")
        try m.append(.string(rule))
        _ = try await call(m, timeout: timeout)
    }
}
