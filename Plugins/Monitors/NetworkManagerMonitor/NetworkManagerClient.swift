import LifelineCore
import LifelineDBus
import LifelineGLib
import LifelineNet
import Logging
import Synchronization

/// Follows NetworkManager on one system bus connection until that connection
/// is lost: reads every property once (`GetAll`) when NetworkManager is on the
/// bus, then only applies what `PropertiesChanged` says. NetworkManager leaving
/// and coming back (`NameOwnerChanged`) is followed on the same connection.
///
/// Only NetworkManager speaks for NetworkManager: a signal counts when its
/// sender is the current owner of `org.freedesktop.NetworkManager`, and who
/// that is only the bus says (`NameOwner`). Any local user can address a
/// signal to this connection, so one that claims `Connectivity = PORTAL`
/// from anyone else is dropped, unread.
final class NetworkManagerClient: Sendable {
    static let name = "org.freedesktop.NetworkManager"
    static let path = "/org/freedesktop/NetworkManager"
    static let activeConnectionInterface = "org.freedesktop.NetworkManager.Connection.Active"
    static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    static let dhcp4Interface = "org.freedesktop.NetworkManager.DHCP4Config"
    static let dhcp6Interface = "org.freedesktop.NetworkManager.DHCP6Config"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    enum Event: Sendable {
        /// The bus said NetworkManager has a new owner (empty: it left).
        case owner(NameOwnerChange)
        /// NetworkManager's own `PropertiesChanged`, its shape checked.
        case propertiesChanged(BusMessage)
        case lost
    }

    private struct Shared {
        var connection: BusConnection?
        var checkEnabled = false
        var present = false
    }

    private let shared = Mutex(Shared())
    private let publisher: Publisher
    private let logger: Logger

    init(handle: MonitorHandle, logger: Logger) {
        self.publisher = Publisher(handle: handle)
        self.logger = logger
    }

    /// Runs until `connection` is lost or the task is cancelled.
    func follow(_ connection: BusConnection, on loop: MainLoopThread) async throws {
        let (events, sink) = AsyncStream<Event>.makeStream()
        await connection.attach(to: loop)
        // Decided on the loop thread, from the header: only what NetworkManager
        // and the bus say is queued, so nothing a stranger sends waits here
        // (the queue is read between calls that may take seconds).
        let networkManager = OwnerGate(Self.name)
        connection.onSignal { message in
            switch networkManager.admit(message) {
            case .ownerChanged(let change): sink.yield(.owner(change))
            case .fromOwner:
                guard message.is(interface: Self.propertiesInterface, member: "PropertiesChanged", signature: "sa{sv}as"),
                      message.path?.hasPrefix(Self.path) == true else { return }
                sink.yield(.propertiesChanged(message))
            case .stranger: return
            }
        }
        connection.onDisconnect { sink.yield(.lost) }
        // Asynchronous: a system bus slow to answer holds no thread of the pool.
        try await connection.subscribe(to: networkManager.matchRule)
        try await connection.subscribe(
            to: "type='signal',sender='\(Self.name)',interface='\(Self.propertiesInterface)',member='PropertiesChanged'")
        shared.withLock { $0.connection = connection }
        defer { shared.withLock { $0 = Shared() } }

        var view = NetworkManagerView()
        var primaryPath = "/"
        var dhcp = DHCPPaths()
        // Asked after subscribing, so an owner that changes meanwhile is still heard of.
        networkManager.learned(owner: try? await connection.owner(of: Self.name))
        if networkManager.owner != nil {
            (view, primaryPath, dhcp) = await readAll(connection)
            arrived(view)
        } else {
            logger.info("NetworkManager is not on the system bus; following it once it starts")
            publisher.absent()
        }
        for await event in events {
            let message: BusMessage
            switch event {
            case .lost: return
            case .propertiesChanged(let m): message = m
            case .owner(let change):
                if change.newOwner.isEmpty {
                    logger.info("NetworkManager left the system bus")
                    shared.withLock { $0.present = false }
                    publisher.absent()
                } else {
                    logger.info("NetworkManager is on the system bus again")
                    (view, primaryPath, dhcp) = await readAll(connection)
                    arrived(view)
                }
                continue
            }
            guard let args = try? message.arguments(), let interface = args[0].string,
                  let changed = args[1].vardictEntries
            else { continue }
            if message.path == Self.path, interface == Self.name {
                var newPrimary: String?
                for (name, value) in changed {
                    if name == "PrimaryConnection", case .objectPath(let p) = value { newPrimary = p }
                    view.apply(name, value)
                }
                if let newPrimary, newPrimary != primaryPath {
                    primaryPath = newPrimary
                    dhcp = await readPrimary(connection, path: primaryPath, into: &view)
                }
            } else if message.path == primaryPath, interface == Self.activeConnectionInterface {
                // The primary connection itself changed (renamed, new device, a new lease).
                dhcp = await readPrimary(connection, path: primaryPath, into: &view)
            } else if message.path == dhcp.v4, interface == Self.dhcp4Interface {
                guard let options = Self.options(in: changed) else { continue }
                view.dhcp4Portal = dhcpPortal(options, names: DHCPCaptivePortal.dhcp4Names, previous: view.dhcp4Portal, view)
            } else if message.path == dhcp.v6, interface == Self.dhcp6Interface {
                guard let options = Self.options(in: changed) else { continue }
                view.dhcp6Portal = dhcpPortal(options, names: DHCPCaptivePortal.dhcp6Names, previous: view.dhcp6Portal, view)
            } else {
                continue
            }
            shared.withLock { $0.checkEnabled = view.checkEnabled }
            publisher.publish(view)
        }
    }

    private func arrived(_ view: NetworkManagerView) {
        shared.withLock {
            $0.present = true
            $0.checkEnabled = view.checkEnabled
        }
        publisher.publish(view)
    }

    /// Asks NetworkManager to check its connectivity now, when it is running and
    /// its own checking is on. Its answer comes back as `PropertiesChanged`.
    func checkConnectivity() async {
        let connection = shared.withLock { s in s.present && s.checkEnabled ? s.connection : nil }
        guard let connection,
              let m = try? BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name,
                                                 member: "CheckConnectivity")
        else { return }
        do {
            _ = try await connection.call(m, timeout: .seconds(30))
        } catch {
            logger.debug("NetworkManager CheckConnectivity: \(error)")
        }
    }

    /// The primary connection's DHCP objects, whose `PropertiesChanged` are followed.
    struct DHCPPaths: Equatable {
        var v4 = "/"
        var v6 = "/"
    }

    /// Every property that matters, the path of the primary connection and of its DHCP objects.
    private func readAll(_ connection: BusConnection) async -> (NetworkManagerView, String, DHCPPaths) {
        var view = NetworkManagerView()
        var primary = "/"
        for (name, value) in await getAll(connection, path: Self.path, interface: Self.name) {
            if name == "PrimaryConnection", case .objectPath(let p) = value { primary = p }
            view.apply(name, value)
        }
        let dhcp = await readPrimary(connection, path: primary, into: &view)
        return (view, primary, dhcp)
    }

    /// The primary connection's name, type, its first device's interface and
    /// what its DHCP options announce.
    private func readPrimary(_ connection: BusConnection, path: String, into view: inout NetworkManagerView) async -> DHCPPaths {
        view.connectionName = ""
        view.connectionType = ""
        view.interface = ""
        let before = (view.dhcp4Portal, view.dhcp6Portal)
        view.dhcp4Portal = nil
        view.dhcp6Portal = nil
        var dhcp = DHCPPaths()
        guard path != "/" else { return dhcp }
        var device: String?
        for (name, value) in await getAll(connection, path: path, interface: Self.activeConnectionInterface) {
            switch (name, value) {
            case ("Id", .string(let s)): view.connectionName = Self.bounded(s, 128)
            case ("Type", .string(let s)): view.connectionType = Self.bounded(s, 64)
            case ("Devices", .array(_, let devices)):
                if case .objectPath(let p)? = devices.first { device = p }
            case ("Dhcp4Config", .objectPath(let p)): dhcp.v4 = p
            case ("Dhcp6Config", .objectPath(let p)): dhcp.v6 = p
            default: break
            }
        }
        guard let device else { return DHCPPaths() }
        for (name, value) in await getAll(connection, path: device, interface: Self.deviceInterface) where name == "Interface" {
            view.interface = Self.bounded(value.string ?? "", 64)
        }
        if dhcp.v4 != "/", let options = Self.options(in: await getAll(connection, path: dhcp.v4, interface: Self.dhcp4Interface)) {
            view.dhcp4Portal = dhcpPortal(options, names: DHCPCaptivePortal.dhcp4Names, previous: before.0, view)
        }
        if dhcp.v6 != "/", let options = Self.options(in: await getAll(connection, path: dhcp.v6, interface: Self.dhcp6Interface)) {
            view.dhcp6Portal = dhcpPortal(options, names: DHCPCaptivePortal.dhcp6Names, previous: before.1, view)
        }
        return dhcp
    }

    private static func options(in properties: [(String, BusValue)]) -> BusValue? {
        properties.first { $0.0 == "Options" }?.1
    }

    /// The announcement in a DHCP object's `Options`. A refused one is logged
    /// when it differs from `previous`, so a lease renewed again and again is
    /// logged once.
    private func dhcpPortal(_ value: BusValue, names: [String], previous: CaptivePortalOption?,
                            _ view: NetworkManagerView) -> CaptivePortalOption? {
        guard let options = value.vardictEntries else {
            logger.debug("NetworkManager DHCP Options of \(view.interface) are not a property map")
            return nil
        }
        let option = DHCPCaptivePortal.option(in: options, names: names)
        if case .refused(let reason)? = option, option != previous {
            logger.warning("networkmanager: \(view.interface): \(reason); not asked")
        }
        return option
    }

    /// A name as another program gave it, cut to `limit` characters: every surface
    /// shows it, and none needs a connection name a megabyte long.
    static func bounded(_ s: String, _ limit: Int) -> String {
        s.unicodeScalars.count <= limit ? s : String(String.UnicodeScalarView(s.unicodeScalars.prefix(limit))) + "…"
    }

    /// `GetAll`; empty when the object is gone or the reply is not a property map.
    private func getAll(_ connection: BusConnection, path: String, interface: String) async -> [(String, BusValue)] {
        do {
            let m = try BusMessage.methodCall(destination: Self.name, path: path, interface: Self.propertiesInterface,
                                              member: "GetAll")
            try m.append(.string(interface))
            let reply = try await connection.call(m, timeout: .seconds(10))
            guard let entries = try reply.arguments().first?.vardictEntries else {
                logger.debug("NetworkManager GetAll \(interface) at \(BusError.shown(path)): not a property map")
                return []
            }
            return entries
        } catch {
            logger.debug("NetworkManager GetAll \(interface) at \(BusError.shown(path)): \(error)")
            return []
        }
    }
}

extension NetworkManagerView {
    /// One property of `org.freedesktop.NetworkManager`; others and mistyped values are ignored.
    mutating func apply(_ name: String, _ value: BusValue) {
        switch (name, value) {
        case ("State", .uint32(let u)): state = u
        case ("Connectivity", .uint32(let u)): connectivity = u
        case ("Metered", .uint32(let u)): metered = u
        case ("ConnectivityCheckEnabled", .bool(let b)): checkEnabled = b
        default: break
        }
    }
}

/// Hands the view to the core: the link observation whenever it changes (it
/// carries the attributes: name, kind, metered), the reachability one only
/// when NetworkManager's connectivity verdict changes, so an old FULL is never
/// sent again to override a fresher probe failure.
final class Publisher: Sendable {
    private let handle: MonitorHandle
    private let last = Mutex<(link: Observation?, reachability: Observation?)>((nil, nil))

    init(handle: MonitorHandle) { self.handle = handle }

    func publish(_ view: NetworkManagerView) {
        send(link: view.link, reachability: view.reachability)
    }

    func absent() {
        let (link, reachability) = NetworkManagerView.absent
        send(link: link, reachability: reachability)
    }

    private func send(link: Observation, reachability: Observation) {
        let (sendLink, sendReach) = last.withLock { last -> (Bool, Bool) in
            let sendLink = last.link != link
            let sendReach = last.reachability.map { $0.state != reachability.state || $0.reason != reachability.reason } ?? true
            if sendLink { last.link = link }
            if sendReach { last.reachability = reachability }
            return (sendLink, sendReach)
        }
        if sendLink { handle.publish(link) }
        if sendReach { handle.publish(reachability) }
    }
}
