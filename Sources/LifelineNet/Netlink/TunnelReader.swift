import CNetlink
import Glibc
import LifelineCore
import LifelinePlatform

/// A VPN and the link underneath it, read from the kernel without sending a
/// packet: which interface the internet's traffic leaves by (a route lookup,
/// policy rules included), whether that is a tunnel, and which interface
/// carries the tunnel's own datagrams, with its router's neighbour entry. The
/// probe reads it around a failed probe, `lifeline diagnose` for its rows.
/// Blocking and bounded like `GatewayReader`: each answer is waited for at most
/// a second.
public enum TunnelReader {
    /// Where a packet to some address leaves, as the kernel routes it now.
    public struct Hop: Sendable, Equatable {
        public var interface: String
        public var index: Int32
        /// The router the packet is handed to; empty when the address is on the link itself.
        public var gateway: String
        /// The routing table the route was found in: the main table, or one
        /// that policy rules chose.
        public var table = UInt32(LL_RT_TABLE_MAIN)
    }

    /// The link that carries a tunnel's own datagrams.
    public struct Carrier: Sendable, Equatable {
        public var interface: String
        /// The router of that link the tunnel's datagrams go to (the VPN
        /// server itself when it is on the link).
        public var router: String
        /// The router's neighbour entry: true when it answers ARP or neighbour
        /// discovery, false while the kernel fails to reach it, nil when unknown.
        public var routerAnswers: Bool?
        /// From sysfs: up (`IFF_UP`) and with a carrier.
        public var isUp: Bool
        public var hasCarrier: Bool
        /// How it was found: "the WireGuard endpoint 10.0.0.1", "the host route to 10.0.0.1", "the main table's default route".
        public var foundBy: String
    }

    /// What a tunnel interface is, from sysfs: a WireGuard device (kernel or
    /// the userspace implementation's tun), tun/tap (OpenVPN and most VPN
    /// clients), ppp, and the kernel's IP tunnels (ipip, sit, gre, ip6gre,
    /// ip6tnl); nil for anything else. An xfrm interface has no type of its
    /// own (ARPHRD_NONE, like tun), so it counts as one too.
    public static func tunnelKind(_ interface: String, sys: String = "/sys/class/net") -> String? {
        guard !interface.isEmpty, !interface.contains("/") else { return nil }
        let dir = sys + "/" + interface
        if let uevent = try? Files.readText(dir + "/uevent", limit: 8192),
           uevent.split(separator: "\n").contains(where: { $0 == "DEVTYPE=wireguard" }) { return "wireguard" }
        if Files.exists(dir + "/tun_flags") { return "tun" }
        guard let text = try? Files.readText(dir + "/type", limit: 64), let type = Int(text.trimmingSpaces()) else { return nil }
        switch type {
        case 512: return "ppp"
        case 768, 769: return "ipip"  // ARPHRD_TUNNEL, ARPHRD_TUNNEL6
        case 776: return "sit"
        case 778, 823: return "gre"  // ARPHRD_IPGRE, ARPHRD_IP6GRE
        case 65534: return "tunnel"  // ARPHRD_NONE: xfrm and other point-to-point devices
        default: return nil
        }
    }

    /// The kernel's route for a packet to `address` (a numeric IPv4 or IPv6
    /// address) carrying `mark`: RTM_GETROUTE, a lookup through the policy
    /// rules; nothing is sent.
    public static func route(to address: String, mark: UInt32 = 0) throws(GatewayReader.Failure) -> Hop? {
        guard let (family, bytes) = Self.bytes(address) else { return nil }
        // struct rtmsg { family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags }
        var body: [UInt8] = [family, UInt8(bytes.count * 8), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        body += attribute(LL_RTA_DST, bytes)
        if mark != 0 { body += attribute(LL_RTA_MARK, withUnsafeBytes(of: mark) { Array($0) }) }
        let socket: NetlinkSocket
        do { socket = try NetlinkSocket(groups: 0, nonBlocking: true) } catch { throw .init(description: "\(error)") }
        let sequence: UInt32
        do { sequence = try socket.request(type: LL_RTM_GETROUTE, body: body) } catch { throw .init(description: "\(error)") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            guard socket.waitReadable(timeoutMs: 1000) else { throw .init(description: "the kernel sent no route within 1 s") }
            let count: Int
            do {
                guard case .data(let n) = try socket.receive(into: buffer) else { continue }
                count = n
            } catch { throw .init(description: "\(error)") }
            for message in NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).messages
            where message.header.sequence == sequence {
                switch message.body {
                case .newRoute(let route):
                    guard let hop = route.nextHops.first, let name = name(of: hop.index) else { return nil }
                    return Hop(interface: name, index: hop.index, gateway: DefaultGateway.text(hop.gateway, family: family),
                               table: route.table)
                case .error(let code) where code != 0:
                    // No route to that address (ENETUNREACH) is an answer, not a failure.
                    if 0 &- code == ENETUNREACH || 0 &- code == EHOSTUNREACH { return nil }
                    throw .init(description: "looking up the route to \(address): \(String(cString: strerror(0 &- code)))")
                default: continue
                }
            }
        }
    }

    /// The link under `tunnel`: the route to the VPN server when its address
    /// is known (WireGuard's peer endpoint, with the tunnel's own fwmark), else
    /// a host route to a server through a router on a link that is not a
    /// tunnel (OpenVPN's redirect-gateway, NetworkManager), else the main
    /// table's default on such a link (policy routing keeps it there).
    public static func carrier(of tunnel: String, endpoint: String?, mark: UInt32 = 0) -> Carrier? {
        var hop: Hop?
        var foundBy = ""
        if let endpoint, let found = try? route(to: endpoint, mark: mark), found.interface != tunnel {
            hop = found.gateway.isEmpty ? Hop(interface: found.interface, index: found.index, gateway: endpoint) : found
            foundBy = "the VPN server \(endpoint)"
        }
        var neighbours: [NeighbourMessage] = []
        if let socket = try? NetlinkSocket(groups: 0, nonBlocking: true) {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
            defer { buffer.deallocate() }
            if hop == nil, let routes = try? GatewayReader.dump(LL_RTM_GETROUTE, on: socket, buffer: buffer).messages {
                (hop, foundBy) = Self.underneath(routes, tunnel: tunnel) ?? (nil, "")
            }
            if hop != nil, let dump = try? GatewayReader.dump(LL_RTM_GETNEIGH, on: socket, buffer: buffer).messages {
                neighbours = dump.compactMap { if case .newNeighbour(let n) = $0.body { n } else { nil } }
            }
        }
        guard let hop else { return nil }
        let router = Self.bytes(hop.gateway)
        let entry = neighbours.first { $0.index == hop.index && $0.family == router?.family && $0.address == router?.bytes }
        let flags = (try? Files.readText("/sys/class/net/\(hop.interface)/flags", limit: 32))
            .flatMap { UInt32($0.trimmingSpaces().dropFirst(2), radix: 16) } ?? 0
        let carrier = (try? Files.readText("/sys/class/net/\(hop.interface)/carrier", limit: 16))?.trimmingSpaces() == "1"
        return Carrier(interface: hop.interface, router: hop.gateway, routerAnswers: entry?.answers,
                       isUp: flags & LL_IFF_UP != 0, hasCarrier: carrier, foundBy: foundBy)
    }

    /// From a route dump: a host route (/32, /128) of the main table through
    /// a router on a link that is not a tunnel, else the lowest-metric main
    /// default route on such a link.
    package static func underneath(_ messages: [NetlinkMessage], tunnel: String) -> (Hop, String)? {
        var hostRoute: (Hop, String)?
        var fallback: (priority: UInt32, hop: Hop)?
        for message in messages {
            guard case .newRoute(let r) = message.body, r.table == UInt32(LL_RT_TABLE_MAIN), r.type == LL_RTN_UNICAST,
                  let next = r.nextHops.first, let name = name(of: next.index), name != tunnel, tunnelKind(name) == nil
            else { continue }
            let hop = Hop(interface: name, index: next.index, gateway: DefaultGateway.text(next.gateway, family: r.family))
            let full: UInt8 = r.family == 2 ? 32 : 128
            if r.destinationLength == full, !hop.gateway.isEmpty, hostRoute == nil {
                hostRoute = (hop, "the host route to \(DefaultGateway.text(r.destination, family: r.family))")
            } else if r.destinationLength == 0, fallback.map({ r.priority < $0.priority }) ?? true {
                fallback = (r.priority, hop)
            }
        }
        return hostRoute ?? fallback.map { ($0.hop, "the main table's default route") }
    }

    package static func name(of index: Int32) -> String? {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(bitPattern: index), &name) != nil else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A numeric address as its family (2 or 10) and bytes.
    package static func bytes(_ address: String) -> (family: UInt8, bytes: [UInt8])? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return (2, withUnsafeBytes(of: v4) { Array($0) }) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 { return (10, withUnsafeBytes(of: v6) { Array($0) }) }
        return nil
    }

    private static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let length = UInt16(4 + value.count)
        var out = withUnsafeBytes(of: length) { Array($0) } + withUnsafeBytes(of: type) { Array($0) } + value
        while out.count % 4 != 0 { out.append(0) }
        return out
    }
}
