import LifelineTestKit
import CNetlink
import Testing
@testable import LifelineNet

@Suite struct NetlinkParserTests {
    @Test func wireLayoutMatchesTheKernelHeaders() {
        #expect(LL_SIZEOF_NLMSGHDR == 16)
        #expect(LL_SIZEOF_IFINFOMSG == 16)
        #expect(LL_SIZEOF_IFADDRMSG == 8)
        #expect(LL_SIZEOF_RTMSG == 12)
        #expect(LL_SIZEOF_RTATTR == 4)
        #expect(LL_SIZEOF_RTNEXTHOP == 8)
        #expect(LL_RTM_NEWROUTE == NetlinkWire.newRoute && LL_RTM_DELLINK == NetlinkWire.delLink && LL_NLM_F_REPLACE == NetlinkWire.replace)
        #expect(LL_IFF_RUNNING == NetlinkWire.running && LL_IFF_LOWER_UP == NetlinkWire.lowerUp)
    }

    @Test func parsesALinkWithNameAndKind() {
        let r = NetlinkParser.parse(NetlinkWire.link(index: 3, flags: NetlinkWire.usable, name: "wg0", hardware: 65534, infoKind: "wireguard"))
        #expect(r.problems.isEmpty)
        #expect(r.messages.map(\.body) == [.newLink(LinkMessage(index: 3, flags: NetlinkWire.usable, hardwareType: 65534, name: "wg0", infoKind: "wireguard"))])
    }

    @Test func parsesRoutesWithGatewayMetricAndTable() {
        let r = NetlinkParser.parse(NetlinkWire.route(flags: NetlinkWire.replace, priority: 100, oif: 2, gateway: NetlinkWire.gw4, tableAttribute: 254))
        #expect(r.problems.isEmpty)
        guard case .newRoute(let route) = r.messages.first?.body else {
            Issue.record("no route: \(r)")
            return
        }
        #expect(r.messages[0].header.flags == NetlinkWire.replace)
        #expect(route.priority == 100 && route.table == 254 && route.destinationLength == 0 && route.type == 1)
        #expect(route.nextHops == [NextHop(index: 2, gateway: NetlinkWire.gw4, flags: 0)])
    }

    @Test func parsesMultipathNextHops() {
        let r = NetlinkParser.parse(NetlinkWire.route(multipath: [(2, NetlinkWire.gw4), (5, NetlinkWire.gw4b)]))
        guard case .newRoute(let route) = r.messages.first?.body else {
            Issue.record("no route: \(r)")
            return
        }
        #expect(route.nextHops.map(\.index) == [2, 5])
        #expect(route.nextHops.map(\.gateway) == [NetlinkWire.gw4, NetlinkWire.gw4b])
    }

    @Test func parsesSeveralMessagesAndTheEndOfADump() {
        let bytes = NetlinkWire.link(index: 1, flags: NetlinkWire.up | NetlinkWire.loopback, name: "lo")
            + NetlinkWire.address(prefix: 24, index: 2, [10, 77, 0, 2])
            + NetlinkWire.message(NetlinkWire.done, NetlinkWire.u32(0))
        let r = NetlinkParser.parse(bytes)
        #expect(r.problems.isEmpty)
        #expect(r.messages.count == 3)
        #expect(r.messages[1].body == .newAddress(AddressMessage(family: 2, prefixLength: 24, index: 2, address: [10, 77, 0, 2])))
        #expect(r.messages[2].body == .done)
    }

    @Test func parsesErrorsAndIgnoresUnknownTypes() {
        let r = NetlinkParser.parse(NetlinkWire.message(NetlinkWire.error, NetlinkWire.i32(-1) + [UInt8](repeating: 0, count: 16)) + NetlinkWire.message(29, [1, 2, 3, 4]))
        #expect(r.messages.map(\.body) == [.error(-1), .ignored])
    }

    @Test func aRuleAddedOrDeletedIsARuleChangeWhateverItSays() {
        // RTM_NEWRULE 32, RTM_DELRULE 33; a fib_rule_hdr is 12 bytes, its content unread.
        let rule = [UInt8](repeating: 0, count: 12)
        let r = NetlinkParser.parse(NetlinkWire.message(32, rule) + NetlinkWire.message(33, rule))
        #expect(r.problems.isEmpty)
        #expect(r.messages.map(\.body) == [.ruleChanged, .ruleChanged])
    }

    @Test func aLengthPastTheBufferDropsTheRestNotMore() {
        var bytes = NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0")
        var bad = NetlinkWire.link(index: 3, flags: 0, name: "v1")
        bad.replaceSubrange(0..<4, with: NetlinkWire.u32(4096))
        bytes += bad
        let r = NetlinkParser.parse(bytes)
        #expect(r.messages.count == 1)
        #expect(r.problems == [.badMessageLength(offset: bytes.count - bad.count, length: 4096, available: bad.count)])
    }

    @Test func aLengthBelowTheHeaderIsRejected() {
        var bytes = NetlinkWire.message(NetlinkWire.done, NetlinkWire.u32(0))
        bytes.replaceSubrange(0..<4, with: NetlinkWire.u32(3))
        let r = NetlinkParser.parse(bytes)
        #expect(r.messages.isEmpty)
        #expect(r.problems.count == 1)
    }

    @Test func aMalformedBodyDropsOnlyThatMessage() {
        let short = NetlinkWire.message(NetlinkWire.newRoute, [2, 0, 0])  // rtmsg needs 12 bytes
        let badAttribute = NetlinkWire.message(NetlinkWire.newRoute, [2, 0, 0, 0, 254, 3, 0, 1] + NetlinkWire.u32(0) + NetlinkWire.u16(200) + NetlinkWire.u16(4))
        let badOIF = NetlinkWire.message(NetlinkWire.newRoute, [2, 0, 0, 0, 254, 3, 0, 1] + NetlinkWire.u32(0) + NetlinkWire.attr(4, [1, 2]))
        let badGateway = NetlinkWire.route(oif: 2, gateway: [1, 2, 3])
        let badHop = NetlinkWire.message(NetlinkWire.newRoute, [2, 0, 0, 0, 254, 3, 0, 1] + NetlinkWire.u32(0) + NetlinkWire.attr(9, NetlinkWire.u16(64) + [0, 0] + NetlinkWire.i32(2)))
        let shortLink = NetlinkWire.message(NetlinkWire.newLink, [0, 0, 1, 0])
        let good = NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0")
        let r = NetlinkParser.parse(short + good + badAttribute + badOIF + badGateway + badHop + shortLink + good)
        #expect(r.messages.count == 2)
        #expect(r.problems.count == 6)
        for problem in r.problems {
            guard case .malformed = problem else {
                Issue.record("unexpected \(problem)")
                continue
            }
        }
    }

    @Test func anAbsurdPrefixLengthIsRejected() {
        let r = NetlinkParser.parse(NetlinkWire.route(dstLength: 40, oif: 2))
        #expect(r.messages.isEmpty && r.problems.count == 1)
    }

    @Test func everyTruncationOfAValidDatagramIsSafe() {
        let bytes = NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0", infoKind: "veth")
            + NetlinkWire.address(family: 10, prefix: 64, index: 2, NetlinkWire.gw6)
            + NetlinkWire.route(family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.gw6)
            + NetlinkWire.route(multipath: [(2, NetlinkWire.gw4), (3, NetlinkWire.gw4b)])
        let full = NetlinkParser.parse(bytes)
        #expect(full.messages.count == 4 && full.problems.isEmpty)
        let ends = full.messages.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + Int($1.header.length)) }
        #expect(ends.last == bytes.count)
        for cut in 0..<bytes.count {
            let r = NetlinkParser.parse(Array(bytes[0..<cut]))
            let complete = ends.filter { $0 <= cut }.count
            #expect(r.messages.count == complete, "cut at \(cut)")
            #expect(r.problems.count == (ends.contains(cut) || cut == 0 ? 0 : 1), "cut at \(cut)")
        }
    }

    /// Random and mutated datagrams: the parser accounts for every byte it
    /// accepts, reports what it cannot use, and the table never names a primary
    /// interface it has no link for.
    @Test func garbageIsReportedAndNeverCorruptsTheTable() {
        var generator = SplitMix(seed: 42)
        var table = RouteTable()
        let seeds = [NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"), NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4),
                     NetlinkWire.route(multipath: [(2, NetlinkWire.gw4), (3, NetlinkWire.gw4b)]), NetlinkWire.address(prefix: 24, index: 2, [10, 0, 0, 2])]
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            } else {
                // Flip bytes of a valid message, so lengths and types stay near-plausible.
                bytes = seeds[Int(generator.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + generator.next() % 4) {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            let r = NetlinkParser.parse(bytes)
            let accepted = r.messages.reduce(0) { $0 + Int($1.header.length) }
            #expect(accepted <= bytes.count, "round \(round): accepted \(accepted) of \(bytes.count) bytes")
            if !bytes.isEmpty, bytes.count < 16 {
                #expect(r.messages.isEmpty && !r.problems.isEmpty, "round \(round): a partial header was not reported")
            }
            for m in r.messages { table.apply(m) }
            if let p = table.primary() {
                #expect(table.links[p.index] != nil, "round \(round): primary \(p.name) has no link")
            }
            #expect(!table.offlineReason(previous: nil).isEmpty)
        }
    }
}

/// A small deterministic generator, so a failure reproduces.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
