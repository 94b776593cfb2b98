import Glibc
import LifelineCore
import LifelineDBus

/// The CLI's side of `org.lifeline.Lifeline1`: connect, one call, done. No GLib
/// loop and no Foundation, so `lifeline status` stays a few milliseconds.
struct DaemonClient {
    let connection: BusConnection

    enum Failure: Error, CustomStringConvertible {
        /// No session bus, or the daemon does not own its name on it.
        case noDaemon(String)
        case call(BusError)

        var description: String {
            switch self {
            case .noDaemon(let why): why
            case .call(let error): error.message.isEmpty ? error.name : error.message
            }
        }
    }

    static func connect() throws(Failure) -> DaemonClient {
        // Never libdbus' X11 autolaunch: a CLI must not start a bus as a side effect.
        guard let address = BusConnection.sessionBusAddress() else { throw .noDaemon("no session bus") }
        do {
            return DaemonClient(connection: try BusConnection.connect(address: address))
        } catch {
            throw .noDaemon("cannot connect to the session bus: \(error.message)")
        }
    }

    /// Calls a method of the service. The daemon is never started by the call:
    /// "no daemon" is an answer here, not something to fix behind the user's back.
    func call(_ member: String, _ arguments: [BusValue] = [], timeout: Duration) throws(Failure) -> [BusValue] {
        do {
            let m = try BusMessage.methodCall(destination: Lifeline1.busName, path: Lifeline1.objectPath,
                                              interface: Lifeline1.interfaceName, member: member)
            m.autoStart = false
            try m.append(arguments)
            return try connection.callBlocking(m, timeout: timeout).arguments()
        } catch {
            if error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner {
                throw .noDaemon("no daemon owns \(Lifeline1.busName)")
            }
            throw .call(error)
        }
    }

    /// Subscribes to the daemon's signals (`members` of its interface, and
    /// `PropertiesChanged` when asked) and to its name changing hands, then asks
    /// the bus who owns the name now. The returned owner is the one peer whose
    /// signals count: any program on the session bus can address a
    /// `StateChanged` to this connection, whatever the match rules say.
    func subscribe(to members: [String], properties: Bool = false) throws(BusError) -> NameOwner {
        let bus = connection
        var daemon = NameOwner(Lifeline1.busName)
        let sender = "type='signal',sender='\(Lifeline1.busName)',path='\(Lifeline1.objectPath)'"
        for member in members {
            try bus.addMatch("\(sender),interface='\(Lifeline1.interfaceName)',member='\(member)'")
        }
        if properties {
            try bus.addMatch("\(sender),interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='\(Lifeline1.interfaceName)'")
        }
        try bus.addMatch(daemon.matchRule)
        daemon.owner = try bus.ownerBlocking(of: Lifeline1.busName, timeout: .seconds(2))
        return daemon
    }

    func status(timeout: Duration = .seconds(2)) throws(Failure) -> StateEvent {
        try statusAndMute(timeout: timeout).event
    }

    /// `GetStatus()`: the state and until when alerts are muted (0 when not).
    func statusAndMute(timeout: Duration = .seconds(2)) throws(Failure) -> (event: StateEvent, mutedUntil: Int64) {
        let reply = try call("GetStatus", timeout: timeout)
        guard let pairs = reply.first?.vardictEntries, let event = Lifeline1.event(fromDetails: pairs) else {
            throw .call(BusError(name: BusError.invalidArgs, "GetStatus returned an unexpected reply"))
        }
        var mutedUntil: Int64 = 0
        if case .uint64(let until)? = pairs.first(where: { $0.0 == "muted_until" })?.1 {
            mutedUntil = Int64(clamping: until)
        }
        return (event, mutedUntil)
    }
}
