import CNetlink
import Glibc

/// The default route of one address family and, when asked for, what the
/// kernel's neighbour table says of its router: the layer under DNS and TCP
/// that the probe and `lifeline diagnose` name when it is silent.
public struct DefaultGateway: Sendable, Equatable {
    public enum Family: String, Sendable { case ipv4, ipv6 }

    public var family: Family
    /// The interface the route leaves by.
    public var interface: String
    public var index: Int32
    /// The router's address ("192.168.1.1", "fe80::1"); empty for a route
    /// with no gateway (a point-to-point link: no router to ask).
    public var address: String
    /// True when the router answers ARP or neighbour discovery, false when
    /// the kernel is failing to reach it (INCOMPLETE or FAILED), nil when
    /// unknown (no entry, not read, a link without neighbour resolution).
    public var answers: Bool?

    public init(family: Family, interface: String, index: Int32, address: String, answers: Bool? = nil) {
        self.family = family
        self.interface = interface
        self.index = index
        self.address = address
        self.answers = answers
    }

    /// Per family, the main-table unicast default route with the lowest metric
    /// (its first live next hop), with its router's neighbour entry looked up
    /// by address and interface. Pure: the dump reader and the tests feed it.
    package static func pick(_ messages: [NetlinkMessage], name: (Int32) -> String?) -> [DefaultGateway] {
        var table = RouteTable()
        var neighbours: [NeighbourMessage] = []
        for message in messages {
            if case .newNeighbour(let entry) = message.body { neighbours.append(entry) } else { table.apply(message) }
        }
        var found: [DefaultGateway] = []
        for (familyCode, family) in [(UInt8(2), Family.ipv4), (UInt8(10), Family.ipv6)] {
            var best: (priority: UInt32, hop: RouteTable.Route.Hop)?
            for route in table.routes where route.family == familyCode && route.type == LL_RTN_UNICAST {
                guard let hop = route.nextHops.first(where: { !$0.dead && $0.index > 0 }) else { continue }
                if best.map({ route.priority < $0.priority }) ?? true { best = (route.priority, hop) }
            }
            guard let hop = best?.hop, let interface = name(hop.index) else { continue }
            let entry = neighbours.first { $0.family == familyCode && $0.index == hop.index && $0.address == hop.gateway }
            found.append(DefaultGateway(family: family, interface: interface, index: hop.index,
                                        address: Self.text(hop.gateway, family: familyCode), answers: entry?.answers))
        }
        return found
    }

    /// An address as people write it; empty when it is not 4 or 16 bytes.
    package static func text(_ bytes: [UInt8], family: UInt8) -> String {
        guard bytes.count == (family == 2 ? 4 : 16) else { return "" }
        var out = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let af = family == 2 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(af, $0.baseAddress, &out, socklen_t(out.count)) != nil }
        return ok ? out.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : ""
    }
}
