import CNetlink

/// `RTM_NEWNEIGH`: one entry of the kernel's neighbour table (ARP for IPv4,
/// neighbour discovery for IPv6), keyed by address and interface: a link-local
/// IPv6 router (fe80::1) can sit on several links at once.
package struct NeighbourMessage: Equatable, Sendable {
    package var family: UInt8
    package var index: Int32
    /// `NUD_*` bits.
    package var state: UInt16
    /// `NDA_DST`: 4 or 16 bytes by family.
    package var address: [UInt8]
    /// `NDA_LLADDR`: the link-layer address once the neighbour answered; empty before.
    package var linkAddress: [UInt8]

    /// Whether the neighbour answers: true when the kernel has (or recently had)
    /// its link-layer address, false while resolving it is failing, nil when
    /// the kernel does not resolve it at all (a link without ARP, an entry with no state).
    package var answers: Bool? {
        if state & (LL_NUD_REACHABLE | LL_NUD_STALE | LL_NUD_DELAY | LL_NUD_PROBE | LL_NUD_PERMANENT) != 0 { return true }
        if state & (LL_NUD_INCOMPLETE | LL_NUD_FAILED) != 0 { return false }
        return nil
    }
}

extension NetlinkParser {
    /// Link-layer addresses are at most this long (`MAX_ADDR_LEN`); anything
    /// longer is not from a kernel.
    package static let maxLinkAddressLength = 32

    // struct ndmsg { u8 family; u8 pad1; u16 pad2; i32 ifindex; u16 state; u8 flags; u8 type; }
    package static func neighbour(_ body: Bytes) throws(Malformed) -> NeighbourMessage {
        let fixed = Int(LL_SIZEOF_NDMSG)
        guard body.count >= fixed, let family = body.u8(0), let index = body.i32(4), let state = body.u16(8) else {
            throw Malformed(what: "neighbour message shorter than ndmsg (\(body.count) < \(fixed))")
        }
        var message = NeighbourMessage(family: family, index: index, state: state, address: [], linkAddress: [])
        try forEachAttribute(body.slice(fixed, body.count - fixed)) { (kind, value) throws(Malformed) in
            switch kind {
            case LL_NDA_DST:
                let expected = family == 2 ? 4 : family == 10 ? 16 : value.count
                guard value.count == expected else { throw Malformed(what: "NDA_DST of \(value.count) bytes for family \(family)") }
                message.address = value.array()
            case LL_NDA_LLADDR:
                guard value.count <= maxLinkAddressLength else { throw Malformed(what: "NDA_LLADDR of \(value.count) bytes") }
                message.linkAddress = value.array()
            default: break
            }
        }
        return message
    }
}
