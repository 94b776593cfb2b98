import Glibc
import LifelineDBus

/// What the monitor hears from the system bus.
enum LogindEvent: Sendable, Equatable {
    /// `PrepareForSleep(true)` before the machine sleeps, `(false)` after it woke up.
    case prepareForSleep(Bool, sender: String)
    /// A session's `Active` changed (nil: invalidated, to be read again).
    case sessionActive(path: String, active: Bool?, sender: String)
    /// The owner of `org.freedesktop.login1` changed; empty when logind left the bus.
    case logindOwner(String)
    case disconnected
}

/// logind's names on the system bus, the calls the monitor makes, and how its
/// signals are read. Every reply and signal is checked for its shape: a peer
/// answering with something else is logged, never trusted.
enum Login1 {
    static let name = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"
    static let session = "org.freedesktop.login1.Session"
    static let user = "org.freedesktop.login1.User"
    static let properties = "org.freedesktop.DBus.Properties"
    /// Answers from logind are quick; a stuck one must not stall the monitor.
    static let callTimeout = Duration.seconds(5)

    /// The signals the monitor follows. A match rule does not keep out a signal
    /// addressed to this connection, which any local user may send: the sender
    /// is checked first (an `OwnerGate` for logind's name, whose owner only the
    /// bus's own `NameOwnerChanged` can change), then the header.
    static let matchRules = [
        "type='signal',sender='\(name)',interface='\(manager)',member='PrepareForSleep',path='\(path)'",
        "type='signal',sender='\(name)',interface='\(properties)',member='PropertiesChanged',arg0='\(session)'",
        NameOwnerChange.matchRule(name: name),
    ]

    /// The event a message from logind's owner stands for (the caller's
    /// `OwnerGate` has dropped everyone else's). Path, interface, member and
    /// signature are checked from the header before any argument is read.
    static func event(fromOwner message: BusMessage) -> LogindEvent? {
        guard message.kind == .signal else { return nil }
        let sender = message.sender ?? ""
        if message.is(interface: manager, member: "PrepareForSleep", signature: "b", path: path) {
            guard let starting = (try? message.arguments())?.first?.bool else { return nil }
            return .prepareForSleep(starting, sender: sender)
        }
        if message.is(interface: properties, member: "PropertiesChanged", signature: "sa{sv}as"),
           let path = message.path, path.hasPrefix(self.path + "/") {
            guard let arguments = try? message.arguments(), arguments[0].string == session,
                  let changed = arguments[1].vardictEntries else { return nil }
            if let active = changed.first(where: { $0.0 == "Active" })?.1.bool {
                return .sessionActive(path: path, active: active, sender: sender)
            }
            if case .array(_, let invalidated) = arguments[2], invalidated.contains(.string("Active")) {
                return .sessionActive(path: path, active: nil, sender: sender)
            }
        }
        return nil
    }

    // MARK: Calls

    static func call(_ connection: BusConnection, _ destination: String, _ path: String, _ interface: String,
                     _ member: String, _ arguments: [BusValue] = []) async throws(BusError) -> [BusValue] {
        let m = try BusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
        try m.append(arguments)
        return try await connection.call(m, timeout: callTimeout).arguments()
    }

    /// Subscribes to `matchRules` without blocking the loop the connection runs on.
    static func subscribe(_ connection: BusConnection) async throws(BusError) {
        for rule in matchRules { try await connection.subscribe(to: rule, timeout: callTimeout) }
    }

    /// logind's unique name, or nil when it is not on the bus.
    static func owner(_ connection: BusConnection) async throws(BusError) -> String? {
        try await connection.owner(of: name, timeout: callTimeout)
    }

    /// A delay inhibitor lock: logind waits (up to its `InhibitDelayMaxSec`)
    /// for the descriptor to be closed before the machine sleeps.
    static func inhibitSleep(_ connection: BusConnection) async throws(BusError) -> InhibitorLock {
        let m = try BusMessage.methodCall(destination: name, path: path, interface: manager, member: "Inhibit")
        try m.append(.string("sleep"), .string("Lifeline"),
                     .string("Holding network alerts while the machine suspends"), .string("delay"))
        let reply = try await connection.call(m, timeout: callTimeout)
        return InhibitorLock(fd: try reply.takeUnixFD())
    }

    /// The session this daemon belongs to: `XDG_SESSION_ID` when set, else the
    /// user's display session (the graphical one logind picks for the user).
    /// Nil when the user has none.
    static func sessionPath(_ connection: BusConnection) async throws(BusError) -> String? {
        if let p = getenv("XDG_SESSION_ID"), p.pointee != 0 {
            let reply = try await call(connection, name, path, manager, "GetSession", [.string(String(cString: p))])
            guard case .objectPath(let session)? = reply.first else { throw unexpected("GetSession", reply) }
            return session
        }
        let reply = try await call(connection, name, path, manager, "GetUser", [.uint32(getuid())])
        guard case .objectPath(let user)? = reply.first else { throw unexpected("GetUser", reply) }
        let display = try await call(connection, name, user, properties, "Get", [.string(Login1.user), .string("Display")])
        guard case .structure(let fields)? = display.first?.variant, fields.count == 2,
              case .objectPath(let session) = fields[1] else { throw unexpected("User.Display", display) }
        return session == "/" ? nil : session
    }

    static func isActive(_ connection: BusConnection, session: String) async throws(BusError) -> Bool {
        let reply = try await call(connection, name, session, properties, "Get", [.string(Login1.session), .string("Active")])
        guard let active = reply.first?.variant?.bool else { throw unexpected("Session.Active", reply) }
        return active
    }

    private static func unexpected(_ what: String, _ reply: [BusValue]) -> BusError {
        BusError(name: BusError.invalidArgs, "\(what): unexpected reply of type '\(reply.map(\.signature).joined())'")
    }
}

/// The descriptor of a logind inhibitor lock: the lock holds while it is open.
final class InhibitorLock: Sendable {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}
