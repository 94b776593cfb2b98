import LifelineTestKit
import CNetlink
import Testing
@testable import LifelineNet

extension NetlinkWire {
    static let newNeigh: UInt16 = 28
    static let incomplete: UInt16 = 0x01, reachable: UInt16 = 0x02, stale: UInt16 = 0x04, failed: UInt16 = 0x20, noarp: UInt16 = 0x40

    /// `RTM_NEWNEIGH`: ndmsg (12 bytes), then NDA_DST (1) and NDA_LLADDR (2).
    static func neighbour(family: UInt8 = 2, index: Int32, state: UInt16, _ address: [UInt8]?, lladdr: [UInt8]? = nil) -> [UInt8] {
        var body: [UInt8] = [family, 0, 0, 0] + i32(index) + u16(state) + [0, 1]
        if let address { body += attr(1, address) }
        if let lladdr { body += attr(2, lladdr) }
        return message(newNeigh, body)
    }

    static let mac: [UInt8] = [0x02, 0, 0, 0, 0, 0x01]
    static let fe80_1: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
}

/// The default route and its router's neighbour entry, from dump bytes as the
/// kernel sends them (host byte order).
@Suite struct DefaultGatewayTests {
    func pick(_ bytes: [UInt8], names: [Int32: String] = [2: "eth0", 3: "wlan0"]) -> [DefaultGateway] {
        let r = NetlinkParser.parse(bytes)
        return DefaultGateway.pick(r.messages) { names[$0] }
    }

    @Test func wireLayoutMatchesTheKernelHeaders() {
        #expect(LL_SIZEOF_NDMSG == 12)
        #expect(LL_RTM_NEWNEIGH == NetlinkWire.newNeigh && LL_NDA_DST == 1 && LL_NDA_LLADDR == 2)
        #expect(LL_NUD_INCOMPLETE == NetlinkWire.incomplete && LL_NUD_FAILED == NetlinkWire.failed && LL_NUD_STALE == NetlinkWire.stale)
    }

    @Test func parsesANeighbourEntry() {
        let r = NetlinkParser.parse(NetlinkWire.neighbour(index: 2, state: NetlinkWire.reachable, NetlinkWire.gw4, lladdr: NetlinkWire.mac))
        #expect(r.problems.isEmpty)
        #expect(r.messages.map(\.body) == [.newNeighbour(NeighbourMessage(family: 2, index: 2, state: NetlinkWire.reachable, address: NetlinkWire.gw4, linkAddress: NetlinkWire.mac))])
    }

    @Test func eachNeighbourStateMeansAnswersSilentOrUnknown() {
        func answers(_ state: UInt16) -> Bool? {
            NeighbourMessage(family: 2, index: 2, state: state, address: NetlinkWire.gw4, linkAddress: []).answers
        }
        for state: UInt16 in [0x02, 0x04, 0x08, 0x10, 0x80] { #expect(answers(state) == true, "state \(state)") }
        for state: UInt16 in [0x01, 0x20] { #expect(answers(state) == false, "state \(state)") }
        for state: UInt16 in [0x00, 0x40] { #expect(answers(state) == nil, "state \(state)") }
    }

    @Test func theLowestMetricDefaultRouteAndItsRoutersEntry() {
        let bytes = NetlinkWire.route(priority: 600, oif: 2, gateway: [192, 168, 1, 1])
            + NetlinkWire.route(priority: 100, oif: 3, gateway: NetlinkWire.gw4)
            + NetlinkWire.route(dstLength: 24, priority: 10, oif: 2, destination: [10, 77, 0, 0])  // not a default route
            + NetlinkWire.route(priority: 1, oif: 2, gateway: [10, 9, 9, 9], tableAttribute: 100)  // not the main table
            + NetlinkWire.route(routeType: 7, priority: 0, oif: 2)  // unreachable: never the gateway
            + NetlinkWire.neighbour(index: 2, state: NetlinkWire.reachable, NetlinkWire.gw4, lladdr: NetlinkWire.mac)  // same address, other link
            + NetlinkWire.neighbour(index: 3, state: NetlinkWire.incomplete, NetlinkWire.gw4)
        #expect(pick(bytes) == [DefaultGateway(family: .ipv4, interface: "wlan0", index: 3, address: "10.77.0.1", answers: false)])
    }

    @Test func aLinkLocalIPv6RouterIsKeyedByAddressAndInterface() {
        let bytes = NetlinkWire.route(family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.fe80_1, tableAttribute: 254)
            + NetlinkWire.route(oif: 3, gateway: NetlinkWire.gw4)
            + NetlinkWire.neighbour(family: 10, index: 3, state: NetlinkWire.reachable, NetlinkWire.fe80_1, lladdr: NetlinkWire.mac)
            + NetlinkWire.neighbour(family: 10, index: 2, state: NetlinkWire.failed, NetlinkWire.fe80_1)
            + NetlinkWire.neighbour(index: 3, state: NetlinkWire.stale, NetlinkWire.gw4, lladdr: NetlinkWire.mac)
        #expect(pick(bytes) == [
            DefaultGateway(family: .ipv4, interface: "wlan0", index: 3, address: "10.77.0.1", answers: true),
            DefaultGateway(family: .ipv6, interface: "eth0", index: 2, address: "fe80::1", answers: false),
        ])
    }

    @Test func noEntryIsUnknownAndARouteWithoutGatewayHasNoRouter() {
        #expect(pick(NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4)) == [DefaultGateway(family: .ipv4, interface: "eth0", index: 2, address: "10.77.0.1")])
        #expect(pick(NetlinkWire.route(oif: 3)) == [DefaultGateway(family: .ipv4, interface: "wlan0", index: 3, address: "")])
        // An interface the namespace no longer has (deleted between dump and lookup).
        #expect(pick(NetlinkWire.route(oif: 9, gateway: NetlinkWire.gw4)).isEmpty)
    }

    @Test func aDeadNextHopIsPassedOver() {
        let bytes = NetlinkWire.route(multipath: [(2, NetlinkWire.gw4), (3, NetlinkWire.gw4b)])
        var messages = NetlinkParser.parse(bytes).messages
        guard case .newRoute(var route) = messages[0].body else {
            Issue.record("no route")
            return
        }
        route.nextHops[0].flags = LL_RTNH_F_DEAD
        messages[0].body = .newRoute(route)
        #expect(DefaultGateway.pick(messages) { $0 == 3 ? "wlan0" : "eth0" }.map(\.address) == ["10.78.0.1"])
    }

    /// Lengths from a kernel that is not one: each bad entry is dropped with a
    /// sentence naming what was wrong, the good ones around it are kept.
    @Test func truncatedOrOversizedAttributesDropOnlyThatEntry() {
        let good = NetlinkWire.neighbour(index: 3, state: NetlinkWire.incomplete, NetlinkWire.gw4)
        let shortBody = NetlinkWire.message(NetlinkWire.newNeigh, [2, 0, 0, 0] + NetlinkWire.i32(3))  // ndmsg needs 12 bytes
        let shortAddress = NetlinkWire.neighbour(index: 3, state: NetlinkWire.reachable, [10, 77, 0])
        let longIPv6 = NetlinkWire.neighbour(family: 10, index: 3, state: NetlinkWire.reachable, NetlinkWire.fe80_1 + [0])
        let hugeLinkAddress = NetlinkWire.neighbour(index: 3, state: NetlinkWire.reachable, NetlinkWire.gw4, lladdr: [UInt8](repeating: 0xAA, count: 33))
        // An attribute that claims more bytes than the entry holds.
        var pastTheEnd = NetlinkWire.neighbour(index: 3, state: NetlinkWire.reachable, NetlinkWire.gw4)
        pastTheEnd.replaceSubrange(28..<30, with: NetlinkWire.u16(200))
        let r = NetlinkParser.parse(shortBody + shortAddress + good + longIPv6 + hugeLinkAddress + pastTheEnd)
        #expect(r.messages.map(\.body) == [.newNeighbour(NeighbourMessage(family: 2, index: 3, state: NetlinkWire.incomplete, address: NetlinkWire.gw4, linkAddress: []))])
        #expect(r.problems.map(\.description) == [
            "message type 28 at byte 0 dropped: neighbour message shorter than ndmsg (8 < 12)",
            "message type 28 at byte 24 dropped: NDA_DST of 3 bytes for family 2",
            "message type 28 at byte \(24 + shortAddress.count + good.count) dropped: NDA_DST of 17 bytes for family 10",
            "message type 28 at byte \(24 + shortAddress.count + good.count + longIPv6.count) dropped: NDA_LLADDR of 33 bytes",
            "message type 28 at byte \(24 + shortAddress.count + good.count + longIPv6.count + hugeLinkAddress.count) dropped: attribute at byte 0 does not fit",
        ])
        // A route through the router whose entry was malformed: unknown, not silent.
        #expect(pick(NetlinkWire.route(oif: 3, gateway: NetlinkWire.gw4) + shortAddress + hugeLinkAddress).first?.answers == nil)
    }

    @Test func everyTruncationOfADumpIsSafe() {
        let bytes = NetlinkWire.route(family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.fe80_1)
            + NetlinkWire.neighbour(family: 10, index: 2, state: NetlinkWire.failed, NetlinkWire.fe80_1)
            + NetlinkWire.neighbour(index: 2, state: NetlinkWire.reachable, NetlinkWire.gw4, lladdr: NetlinkWire.mac)
            + NetlinkWire.message(NetlinkWire.done, NetlinkWire.u32(0))
        for cut in 0...bytes.count {
            let r = NetlinkParser.parse(Array(bytes[0..<cut]))
            let gateways = DefaultGateway.pick(r.messages) { $0 == 2 ? "eth0" : nil }
            // Once the route is whole it is found; the entry only counts when whole too.
            #expect(gateways.count == (cut >= 64 ? 1 : 0), "cut at \(cut)")
            #expect(gateways.first?.answers == (cut >= 64 + 48 ? false : nil), "cut at \(cut)")
        }
    }
}
