import CNetlink

// The rtnetlink wire format as typed values. Pure: bytes in, messages and
// problems out, no socket, no logging, no Foundation, so unit tests and the
// libFuzzer target (fuzz/NetlinkFuzz) drive it with hand-built buffers.
//
// Every read goes through `Bytes`, which checks its range first: a length field
// that points past the buffer drops that message (or, for the outer header, the
// rest of the datagram), never reads beyond it.

/// The fixed header every netlink message starts with.
package struct NetlinkHeader: Equatable, Sendable {
    package var length: UInt32
    package var type: UInt16
    package var flags: UInt16
    package var sequence: UInt32
    package var port: UInt32
}

/// `RTM_NEWLINK` / `RTM_DELLINK`.
package struct LinkMessage: Equatable, Sendable {
    package var index: Int32
    /// `IFF_*` flags.
    package var flags: UInt32
    /// `ARPHRD_*`.
    package var hardwareType: UInt16
    package var name: String?
    /// `IFLA_INFO_KIND` ("veth", "wireguard", "tun", …) when the kernel says.
    package var infoKind: String?
}

/// `RTM_NEWADDR` / `RTM_DELADDR`.
package struct AddressMessage: Equatable, Sendable {
    package var family: UInt8
    package var prefixLength: UInt8
    package var index: Int32
    /// `IFA_LOCAL`, else `IFA_ADDRESS` (point-to-point links carry both).
    package var address: [UInt8]
}

/// One next hop of a route (a plain route has one, `RTA_MULTIPATH` several).
package struct NextHop: Equatable, Hashable, Sendable {
    package var index: Int32
    package var gateway: [UInt8]
    /// `RTNH_F_*` as the kernel reported them when the message was sent.
    package var flags: UInt32
}

/// `RTM_NEWROUTE` / `RTM_DELROUTE`.
package struct RouteMessage: Equatable, Sendable {
    package var family: UInt8
    package var destinationLength: UInt8
    package var tos: UInt8
    /// `RTA_TABLE` when present (tables above 255), else `rtm_table`.
    package var table: UInt32
    /// `RTN_*`: unicast, blackhole, unreachable, …
    package var type: UInt8
    /// `RTA_PRIORITY`, the metric; 0 when absent.
    package var priority: UInt32
    package var destination: [UInt8]
    package var preferredSource: [UInt8]
    package var nextHops: [NextHop]
}

package enum NetlinkBody: Equatable, Sendable {
    case newLink(LinkMessage)
    case deleteLink(LinkMessage)
    case newAddress(AddressMessage)
    case deleteAddress(AddressMessage)
    case newRoute(RouteMessage)
    case deleteRoute(RouteMessage)
    /// `RTM_NEWNEIGH`, from a neighbour dump (the monitor joins no neighbour group).
    case newNeighbour(NeighbourMessage)
    /// `RTM_NEWRULE` or `RTM_DELRULE`: policy routing changed (a VPN such as
    /// `wg-quick` steering the internet's traffic into its tunnel). Its content
    /// is not read: the kernel's route lookup answers what it changed.
    case ruleChanged
    /// End of a dump.
    case done
    /// `NLMSG_ERROR`: 0 is an acknowledgement, otherwise a negative errno.
    case error(Int32)
    /// `RTM_NEWNDUSEROPT`: a Router Advertisement's option the kernel passes on.
    case ndUserOption(NDUserOption)
    /// A type this monitor does not model (noop, neighbour deletion, …).
    case ignored
}

package struct NetlinkMessage: Equatable, Sendable {
    package var header: NetlinkHeader
    package var body: NetlinkBody
}

/// Why (part of) a datagram was dropped. One sentence for the log line.
package enum NetlinkProblem: Equatable, Sendable, CustomStringConvertible {
    /// Bytes left after the last message that cannot hold a header.
    case trailingBytes(Int)
    /// An outer length that is too small or runs past the datagram: the rest is unreadable.
    case badMessageLength(offset: Int, length: UInt32, available: Int)
    /// A message whose body or attributes do not fit in it.
    case malformed(type: UInt16, offset: Int, what: String)

    package var description: String {
        switch self {
        case .trailingBytes(let n):
            "\(n) trailing bytes after the last message"
        case .badMessageLength(let offset, let length, let available):
            "message at byte \(offset) claims \(length) bytes, \(available) available; rest of datagram dropped"
        case .malformed(let type, let offset, let what):
            "message type \(type) at byte \(offset) dropped: \(what)"
        }
    }
}

package enum NetlinkParser {
    package struct Result: Sendable {
        package var messages: [NetlinkMessage] = []
        package var problems: [NetlinkProblem] = []
    }

    /// Splits one datagram into messages. Malformed messages become problems;
    /// the well-formed ones around them are kept.
    package static func parse(_ buffer: UnsafeRawBufferPointer) -> Result {
        var result = Result()
        let unsplit = forEachMessage(Bytes(buffer)) { header, offset, body in
            do throws(Malformed) {
                result.messages.append(NetlinkMessage(header: header, body: try parseBody(type: header.type, body)))
            } catch {
                result.problems.append(.malformed(type: header.type, offset: offset, what: error.what))
            }
        }
        result.problems += unsplit
        return result
    }

    /// Walks the messages of one datagram: `body` gets each header, its offset
    /// and its body. A length that cannot be right ends the walk: the rest of
    /// the datagram cannot be split, and that is the problem returned.
    package static func forEachMessage(
        _ bytes: Bytes, _ body: (NetlinkHeader, Int, Bytes) -> Void
    ) -> [NetlinkProblem] {
        let headerSize = Int(LL_SIZEOF_NLMSGHDR)
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= headerSize,
                  let length = bytes.u32(offset), let type = bytes.u16(offset + 4),
                  let flags = bytes.u16(offset + 6), let sequence = bytes.u32(offset + 8),
                  let port = bytes.u32(offset + 12)
            else { return [.trailingBytes(available)] }
            guard Int(length) >= headerSize, Int(length) <= available else {
                return [.badMessageLength(offset: offset, length: length, available: available)]
            }
            let header = NetlinkHeader(length: length, type: type, flags: flags, sequence: sequence, port: port)
            body(header, offset, bytes.slice(offset + headerSize, Int(length) - headerSize))
            // The last message of a datagram may omit its alignment padding.
            offset += min(Int(ll_nlmsg_align(length)), available)
        }
        return []
    }

    package static func parse(_ bytes: [UInt8]) -> Result {
        bytes.withUnsafeBytes { parse($0) }
    }

    package struct Malformed: Error {
        package var what: String
    }

    private static func parseBody(type: UInt16, _ body: Bytes) throws(Malformed) -> NetlinkBody {
        switch type {
        case LL_RTM_NEWLINK: return .newLink(try link(body))
        case LL_RTM_DELLINK: return .deleteLink(try link(body))
        case LL_RTM_NEWADDR: return .newAddress(try address(body))
        case LL_RTM_DELADDR: return .deleteAddress(try address(body))
        case LL_RTM_NEWROUTE: return .newRoute(try route(body))
        case LL_RTM_DELROUTE: return .deleteRoute(try route(body))
        case LL_RTM_NEWNEIGH: return .newNeighbour(try neighbour(body))
        case LL_RTM_NEWRULE, LL_RTM_DELRULE: return .ruleChanged
        case LL_RTM_NEWNDUSEROPT: return .ndUserOption(try ndUserOption(body))
        case LL_NLMSG_DONE: return .done
        case LL_NLMSG_ERROR:
            guard let code = body.i32(0) else { throw Malformed(what: "error message shorter than its code") }
            return .error(code)
        default: return .ignored
        }
    }

    // struct nduseroptmsg { u8 family; u8 pad1; u16 opts_len; i32 ifindex; u8 icmp_type; u8 icmp_code;
    // u16 pad2; u32 pad3; }, then `opts_len` bytes of options.
    private static func ndUserOption(_ body: Bytes) throws(Malformed) -> NDUserOption {
        let fixed = Int(LL_SIZEOF_NDUSEROPTMSG)
        guard body.count >= fixed, let length = body.u16(2), let index = body.i32(4), let icmpType = body.u8(8) else {
            throw Malformed(what: "ND user option shorter than nduseroptmsg (\(body.count) < \(fixed))")
        }
        guard fixed + Int(length) <= body.count else {
            throw Malformed(what: "ND user option of \(length) bytes runs past its message")
        }
        return NDUserOption(index: index, icmpType: icmpType, options: body.slice(fixed, Int(length)).array())
    }

    // struct ifinfomsg { u8 family; u8 pad; u16 type; i32 index; u32 flags; u32 change; }
    private static func link(_ body: Bytes) throws(Malformed) -> LinkMessage {
        let fixed = Int(LL_SIZEOF_IFINFOMSG)
        guard body.count >= fixed, let type = body.u16(2), let index = body.i32(4), let flags = body.u32(8) else {
            throw Malformed(what: "link message shorter than ifinfomsg (\(body.count) < \(fixed))")
        }
        var message = LinkMessage(index: index, flags: flags, hardwareType: type)
        try forEachAttribute(body.slice(fixed, body.count - fixed)) { (kind, value) throws(Malformed) in
            switch kind {
            case LL_IFLA_IFNAME:
                message.name = value.cString()
            case LL_IFLA_LINKINFO:
                try forEachAttribute(value) { (inner, innerValue) throws(Malformed) in
                    if inner == LL_IFLA_INFO_KIND { message.infoKind = innerValue.cString() }
                }
            default: break
            }
        }
        guard index > 0 else { throw Malformed(what: "link index \(index)") }
        return message
    }

    // struct ifaddrmsg { u8 family; u8 prefixlen; u8 flags; u8 scope; u32 index; }
    private static func address(_ body: Bytes) throws(Malformed) -> AddressMessage {
        let fixed = Int(LL_SIZEOF_IFADDRMSG)
        guard body.count >= fixed, let family = body.u8(0), let prefix = body.u8(1), let index = body.u32(4) else {
            throw Malformed(what: "address message shorter than ifaddrmsg (\(body.count) < \(fixed))")
        }
        var local: [UInt8]?
        var address: [UInt8]?
        try forEachAttribute(body.slice(fixed, body.count - fixed)) { (kind, value) throws(Malformed) in
            switch kind {
            case LL_IFA_LOCAL: local = try addressBytes(value, family: family, what: "IFA_LOCAL")
            case LL_IFA_ADDRESS: address = try addressBytes(value, family: family, what: "IFA_ADDRESS")
            default: break
            }
        }
        return AddressMessage(family: family, prefixLength: prefix, index: Int32(bitPattern: index),
                              address: local ?? address ?? [])
    }

    // struct rtmsg { u8 family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags; }
    private static func route(_ body: Bytes) throws(Malformed) -> RouteMessage {
        let fixed = Int(LL_SIZEOF_RTMSG)
        guard body.count >= fixed, let family = body.u8(0), let dstLength = body.u8(1), let tos = body.u8(3),
              let table = body.u8(4), let type = body.u8(7), let flags = body.u32(8)
        else {
            throw Malformed(what: "route message shorter than rtmsg (\(body.count) < \(fixed))")
        }
        var route = RouteMessage(family: family, destinationLength: dstLength, tos: tos, table: UInt32(table),
                                 type: type, priority: 0, destination: [], preferredSource: [], nextHops: [])
        var outputIndex: Int32 = 0
        var gateway: [UInt8] = []
        var multipath: [NextHop]?
        try forEachAttribute(body.slice(fixed, body.count - fixed)) { (kind, value) throws(Malformed) in
            switch kind {
            case LL_RTA_DST: route.destination = try addressBytes(value, family: family, what: "RTA_DST")
            case LL_RTA_PREFSRC: route.preferredSource = try addressBytes(value, family: family, what: "RTA_PREFSRC")
            case LL_RTA_GATEWAY: gateway = try addressBytes(value, family: family, what: "RTA_GATEWAY")
            case LL_RTA_VIA: gateway = try via(value)
            case LL_RTA_OIF: outputIndex = Int32(bitPattern: try u32Attribute(value, "RTA_OIF"))
            case LL_RTA_PRIORITY: route.priority = try u32Attribute(value, "RTA_PRIORITY")
            case LL_RTA_TABLE: route.table = try u32Attribute(value, "RTA_TABLE")
            case LL_RTA_MULTIPATH: multipath = try nextHops(value, family: family)
            default: break
            }
        }
        let maxLength: UInt8 = family == 2 ? 32 : family == 10 ? 128 : 255
        guard dstLength <= maxLength else { throw Malformed(what: "destination length \(dstLength)") }
        if let multipath {
            route.nextHops = multipath
        } else if outputIndex != 0 || !gateway.isEmpty {
            route.nextHops = [NextHop(index: outputIndex, gateway: gateway, flags: flags)]
        }
        return route
    }

    // struct rtnexthop { u16 len; u8 flags; u8 hops; i32 ifindex; } followed by attributes.
    private static func nextHops(_ value: Bytes, family: UInt8) throws(Malformed) -> [NextHop] {
        var hops: [NextHop] = []
        let fixed = Int(LL_SIZEOF_RTNEXTHOP)
        var offset = 0
        while value.count - offset >= fixed {
            guard let length = value.u16(offset), let flags = value.u8(offset + 2), let index = value.i32(offset + 4),
                  Int(length) >= fixed, Int(length) <= value.count - offset
            else { throw Malformed(what: "RTA_MULTIPATH next hop at byte \(offset) does not fit") }
            var hop = NextHop(index: index, gateway: [], flags: UInt32(flags))
            try forEachAttribute(value.slice(offset + fixed, Int(length) - fixed)) { (kind, inner) throws(Malformed) in
                if kind == LL_RTA_GATEWAY { hop.gateway = try addressBytes(inner, family: family, what: "RTA_GATEWAY") }
                if kind == LL_RTA_VIA { hop.gateway = try via(inner) }
            }
            hops.append(hop)
            offset += Int(ll_rta_align(UInt32(length)))
        }
        return hops
    }

    /// Walks `struct rtattr { u16 len; u16 type; }` records; the type loses its
    /// nested/byte-order bits. A record that does not fit throws.
    package static func forEachAttribute(
        _ bytes: Bytes, _ body: (UInt16, Bytes) throws(Malformed) -> Void
    ) throws(Malformed) {
        let header = Int(LL_SIZEOF_RTATTR)
        var offset = 0
        while bytes.count - offset >= header {
            guard let length = bytes.u16(offset), let type = bytes.u16(offset + 2),
                  Int(length) >= header, Int(length) <= bytes.count - offset
            else { throw Malformed(what: "attribute at byte \(offset) does not fit") }
            try body(type & LL_NLA_TYPE_MASK, bytes.slice(offset + header, Int(length) - header))
            offset += Int(ll_rta_align(UInt32(length)))
        }
    }

    private static func u32Attribute(_ value: Bytes, _ name: String) throws(Malformed) -> UInt32 {
        guard value.count == 4, let v = value.u32(0) else { throw Malformed(what: "\(name) of \(value.count) bytes") }
        return v
    }

    private static func addressBytes(_ value: Bytes, family: UInt8, what: String) throws(Malformed) -> [UInt8] {
        let expected = family == 2 ? 4 : family == 10 ? 16 : value.count
        guard value.count == expected else { throw Malformed(what: "\(what) of \(value.count) bytes for family \(family)") }
        return value.array()
    }

    // struct rtvia { u16 family; u8 addr[]; }
    private static func via(_ value: Bytes) throws(Malformed) -> [UInt8] {
        guard value.count >= 2 else { throw Malformed(what: "RTA_VIA of \(value.count) bytes") }
        return value.slice(2, value.count - 2).array()
    }
}

/// A bounds-checked view of part of a buffer: every read returns nil instead of
/// reading outside `[start, start + count)`. Integers are in host byte order,
/// as netlink sends them.
package struct Bytes {
    private let base: UnsafeRawBufferPointer
    private let start: Int
    package let count: Int

    package init(_ base: UnsafeRawBufferPointer) {
        self.base = base
        self.start = 0
        self.count = base.count
    }

    private init(base: UnsafeRawBufferPointer, start: Int, count: Int) {
        self.base = base
        self.start = start
        self.count = count
    }

    /// The sub-range `[offset, offset + length)`, clamped to this view.
    package func slice(_ offset: Int, _ length: Int) -> Bytes {
        let lower = max(0, min(offset, count))
        let upper = max(lower, min(lower + max(0, length), count))
        return Bytes(base: base, start: start + lower, count: upper - lower)
    }

    private func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T? {
        guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return nil }
        return base.loadUnaligned(fromByteOffset: start + offset, as: T.self)
    }

    package func u8(_ offset: Int) -> UInt8? { load(offset, as: UInt8.self) }
    package func u16(_ offset: Int) -> UInt16? { load(offset, as: UInt16.self) }
    package func u32(_ offset: Int) -> UInt32? { load(offset, as: UInt32.self) }
    package func i32(_ offset: Int) -> Int32? { load(offset, as: Int32.self) }

    package func array() -> [UInt8] {
        count == 0 ? [] : Array(UnsafeRawBufferPointer(rebasing: base[start..<(start + count)]))
    }

    /// Text up to the first NUL (or the end); invalid UTF-8 is replaced, not trusted.
    package func cString() -> String {
        let all = array()
        let end = all.firstIndex(of: 0) ?? all.count
        return String(decoding: all[..<end], as: UTF8.self)
    }
}
