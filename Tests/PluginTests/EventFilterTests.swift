import LifelineTestKit
import Testing
@testable import NetlinkMonitor

/// Runs the socket filter on hand-built messages with a small classic-BPF
/// interpreter (the subset the filter uses: ld h/w/b abs, jeq k, jgt k, ret k; an
/// out-of-range load drops the packet, as in the kernel).
@Suite struct EventFilterTests {
    func run(_ program: [EventFilter.Instruction], _ packet: [UInt8]) -> Bool {
        var a: UInt32 = 0
        var pc = 0
        func load(_ offset: UInt32, _ size: Int) -> UInt32? {
            let o = Int(offset)
            guard o + size <= packet.count else { return nil }
            return packet[o..<(o + size)].reduce(0) { $0 << 8 | UInt32($1) }  // big-endian, like BPF
        }
        while pc < program.count {
            let i = program[pc]
            switch i.code {
            case 0x28, 0x20, 0x30:  // ld h, ld w, ld b
                guard let v = load(i.k, i.code == 0x28 ? 2 : i.code == 0x20 ? 4 : 1) else { return false }
                a = v
                pc += 1
            case 0x15:  // jeq k
                pc += 1 + Int(a == i.k ? i.jt : i.jf)
            case 0x25:  // jgt k
                pc += 1 + Int(a > i.k ? i.jt : i.jf)
            case 0x06:  // ret k
                return i.k != 0
            default:
                Issue.record("unexpected opcode \(i.code)")
                return false
            }
        }
        Issue.record("program ran off its end")
        return false
    }

    @Test func keepsDefaultRoutesAndWatchedInterfacesOnly() {
        let p = EventFilter.program(watching: [2, 7])
        #expect(run(p, NetlinkWire.route(oif: 5, gateway: NetlinkWire.gw4)))
        #expect(run(p, NetlinkWire.route(NetlinkWire.delRoute, family: 10, priority: 1024, oif: 9, gateway: NetlinkWire.gw6)))
        #expect(run(p, NetlinkWire.route(routeType: 7)), "an unreachable default replaces a usable one")
        #expect(!run(p, NetlinkWire.route(family: 10, dstLength: 64, oif: 2, destination: NetlinkWire.gw6)))
        #expect(!run(p, NetlinkWire.route(family: 10, dstLength: 0, table: 255, oif: 2)), "local table")
        #expect(!run(p, NetlinkWire.route(table: 100, oif: 2, gateway: NetlinkWire.gw4)), "policy-routing table")
        // A VPN's pair of broad routes (OpenVPN's def1: 0.0.0.0/1 and 128.0.0.0/1) moves the internet's path.
        #expect(run(p, NetlinkWire.route(dstLength: 1, oif: 9, destination: [128, 0, 0, 0])))
        #expect(run(p, NetlinkWire.route(NetlinkWire.delRoute, dstLength: 1, oif: 9, destination: [0, 0, 0, 0])))
        #expect(run(p, NetlinkWire.route(family: 10, dstLength: 3, oif: 9, destination: [0x20] + Array(repeating: 0, count: 15))))
        #expect(!run(p, NetlinkWire.route(dstLength: 8, oif: 9, destination: [10, 0, 0, 0])), "a private network's route")
        #expect(!run(p, NetlinkWire.route(dstLength: 1, table: 100, oif: 9, destination: [0, 0, 0, 0])), "policy-routing table")
        #expect(run(p, NetlinkWire.link(index: 2, flags: 0, name: "v0")))
        #expect(run(p, NetlinkWire.link(NetlinkWire.delLink, index: 7, flags: 0, name: "w0")))
        #expect(!run(p, NetlinkWire.link(index: 3, flags: NetlinkWire.usable, name: "veth3")))
        #expect(run(p, NetlinkWire.address(NetlinkWire.delAddr, prefix: 24, index: 2, [10, 77, 0, 2])))
        #expect(!run(p, NetlinkWire.address(family: 10, prefix: 64, index: 3, NetlinkWire.gw6)))
        #expect(run(p, NetlinkWire.message(NetlinkWire.error, NetlinkWire.i32(0))), "other types pass")
        #expect(!run(p, [1, 2, 3]), "too short to be a message")
    }

    @Test func watchingNothingStillKeepsRoutes() {
        let p = EventFilter.program(watching: [])
        #expect(run(p, NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4)))
        #expect(!run(p, NetlinkWire.link(index: 2, flags: 0, name: "v0")))
    }

    @Test func tooManyWatchedInterfacesLetsAllLinksThrough() {
        let many = Set((1...Int32(EventFilter.maxWatched + 1)))
        let p = EventFilter.program(watching: many)
        #expect(run(p, NetlinkWire.link(index: 9999, flags: 0, name: "x")))
        #expect(!run(p, NetlinkWire.route(family: 10, dstLength: 64, oif: 2, destination: NetlinkWire.gw6)))
        let most = EventFilter.program(watching: Set(1...Int32(EventFilter.maxWatched)))
        #expect(run(most, NetlinkWire.link(index: Int32(EventFilter.maxWatched), flags: 0, name: "x")))
        #expect(!run(most, NetlinkWire.link(index: 9999, flags: 0, name: "x")))
    }
}
