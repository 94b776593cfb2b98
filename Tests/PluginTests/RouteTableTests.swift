import LifelineTestKit
import Foundation
import LifelineConfig
import LifelineCore
import LifelineTOML
import Testing
@testable import LifelineNet
@testable import NetlinkMonitor

/// The route model fed with hand-built messages, one kernel quirk per test.
@Suite struct RouteTableTests {
    /// v0 (index 2) up with 10.77.0.2/24 and an IPv4 default route via 10.77.0.1.
    static func connected() -> RouteTable {
        var t = RouteTable()
        feed(&t, NetlinkWire.link(index: 1, flags: NetlinkWire.up | NetlinkWire.running | NetlinkWire.loopback, name: "lo", hardware: 772))
        feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        feed(&t, NetlinkWire.address(prefix: 24, index: 2, [10, 77, 0, 2]))
        feed(&t, NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4))
        return t
    }

    /// Applies every message of a datagram; returns whether any touched the decision.
    @discardableResult
    static func feed(_ t: inout RouteTable, _ bytes: [UInt8]) -> Bool {
        let r = NetlinkParser.parse(bytes)
        #expect(r.problems.isEmpty)
        return r.messages.reduce(false) { t.apply($1) || $0 }
    }

    func verdict(_ t: RouteTable, previous: RouteTable.Primary?) -> String {
        t.primary().map { "online \($0.name)" } ?? "offline: \(t.offlineReason(previous: previous))"
    }

    @Test func aDefaultRouteOnAUsableLinkIsOnline() {
        let t = Self.connected()
        #expect(t.primary() == RouteTable.Primary(index: 2, name: "v0", family: 2, priority: 0))
    }

    @Test func noDefaultRouteIsOffline() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        #expect(verdict(t, previous: nil) == "offline: no default route")
    }

    @Test func linkDownFlushesIPv4RoutesSilentlyAndUpDoesNotRestoreThem() {
        var t = Self.connected()
        let before = t.primary()
        #expect(Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "v0")))
        #expect(verdict(t, previous: before) == "offline: v0 is down")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        #expect(t.primary() == nil, "the kernel does not bring IPv4 routes back")
        Self.feed(&t, NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.primary()?.name == "v0")
    }

    @Test func carrierLossKeepsTheRouteButMakesItUnusable() {
        var t = Self.connected()
        let before = t.primary()
        #expect(Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.up, name: "v0")))
        #expect(verdict(t, previous: before) == "offline: carrier lost on v0")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        #expect(t.primary()?.name == "v0")
    }

    @Test func routeDeleteAndReAdd() {
        var t = Self.connected()
        let before = t.primary()
        #expect(Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, oif: 2, gateway: NetlinkWire.gw4)))
        #expect(verdict(t, previous: before) == "offline: default route via v0 removed")
        Self.feed(&t, NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.primary()?.name == "v0")
    }

    @Test func replaceMovesTheRouteWithoutADelete() {
        var t = Self.connected()
        Self.feed(&t, NetlinkWire.link(index: 5, flags: NetlinkWire.usable, name: "w0"))
        Self.feed(&t, NetlinkWire.route(flags: NetlinkWire.replace, oif: 5, gateway: NetlinkWire.gw4b))
        #expect(t.primary()?.name == "w0")
        #expect(t.routes.count == 1)
        let before = t.primary()
        Self.feed(&t, NetlinkWire.route(flags: NetlinkWire.replace, routeType: 7))
        #expect(verdict(t, previous: before) == "offline: default route via w0 replaced by an unreachable route")
    }

    @Test func ipv6DefaultRemainsWhenIPv4IsFlushed() {
        var t = Self.connected()
        Self.feed(&t, NetlinkWire.route(family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.gw6))
        Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.primary() == RouteTable.Primary(index: 2, name: "v0", family: 10, priority: 1024))
        let before = t.primary()
        Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.gw6))
        #expect(verdict(t, previous: before) == "offline: default route via v0 removed")
    }

    @Test func ipv6RoutesSurviveLinkDownUntilTheKernelDeletesThem() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        Self.feed(&t, NetlinkWire.route(family: 10, priority: 1024, oif: 2, gateway: NetlinkWire.gw6))
        Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "v0"))
        #expect(t.routes.count == 1, "IPv6 deletions are announced, not implied")
        #expect(t.primary() == nil)
    }

    @Test func removingTheLastIPv4AddressFlushesTheRoutes() {
        var t = Self.connected()
        let before = t.primary()
        #expect(Self.feed(&t, NetlinkWire.address(NetlinkWire.delAddr, prefix: 24, index: 2, [10, 77, 0, 2])))
        #expect(verdict(t, previous: before) == "offline: address 10.77.0.2/24 removed from v0")
        #expect(t.routes.isEmpty)
    }

    @Test func removingOneOfTwoAddressesKeepsTheRoute() {
        var t = Self.connected()
        Self.feed(&t, NetlinkWire.address(prefix: 24, index: 2, [10, 77, 0, 3]))
        Self.feed(&t, NetlinkWire.address(NetlinkWire.delAddr, prefix: 24, index: 2, [10, 77, 0, 3]))
        #expect(t.primary()?.name == "v0")
    }

    @Test func multipathNeedsOneLiveHopAndRevivesDeadOnes() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        Self.feed(&t, NetlinkWire.link(index: 3, flags: NetlinkWire.usable, name: "v1"))
        Self.feed(&t, NetlinkWire.route(multipath: [(2, NetlinkWire.gw4), (3, NetlinkWire.gw4b)]))
        #expect(t.primary()?.name == "v0")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "v0"))
        #expect(t.primary()?.name == "v1")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        #expect(t.primary()?.name == "v0", "the kernel revives the hop of a surviving multipath route")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "v0"))
        Self.feed(&t, NetlinkWire.link(index: 3, flags: 0, name: "v1"))
        #expect(t.routes.isEmpty && t.primary() == nil)
    }

    @Test func lowestMetricWinsAndIgnoredNamesOnlyBreakTies() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "docker0"))
        Self.feed(&t, NetlinkWire.link(index: 3, flags: NetlinkWire.usable, name: "eth0"))
        Self.feed(&t, NetlinkWire.route(priority: 100, oif: 3, gateway: NetlinkWire.gw4b))
        Self.feed(&t, NetlinkWire.route(priority: 50, oif: 2, gateway: NetlinkWire.gw4))
        let ignore = NamePatterns(patterns: NetlinkMonitor.Config.defaultIgnore)
        #expect(t.primary(deprioritised: ignore.matches)?.name == "docker0", "metric first")
        Self.feed(&t, NetlinkWire.route(priority: 100, oif: 2, gateway: NetlinkWire.gw4))
        Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, priority: 50, oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.primary(deprioritised: ignore.matches)?.name == "eth0", "equal metric: not the ignored one")
        #expect(t.primary()?.name == "docker0", "without patterns: the lower index")
    }

    @Test func virtualChurnWithoutDefaultRouteIsIrrelevant() {
        var t = Self.connected()
        for i in Int32(10)..<Int32(60) {
            #expect(!Self.feed(&t, NetlinkWire.link(index: i, flags: 0, name: "veth\(i)", infoKind: "veth")))
            #expect(!Self.feed(&t, NetlinkWire.link(index: i, flags: NetlinkWire.usable, name: "veth\(i)")))
            #expect(!Self.feed(&t, NetlinkWire.address(family: 10, prefix: 64, index: i, NetlinkWire.gw6)))
            #expect(!Self.feed(&t, NetlinkWire.route(family: 10, dstLength: 64, table: 254, oif: i, destination: NetlinkWire.gw6)))
            #expect(!Self.feed(&t, NetlinkWire.route(family: 10, dstLength: 8, table: 255, oif: i, destination: NetlinkWire.gw6)))
            #expect(!Self.feed(&t, NetlinkWire.link(NetlinkWire.delLink, index: i, flags: 0, name: "veth\(i)")))
        }
        #expect(t.primary()?.name == "v0")
    }

    @Test func defaultRoutesOutsideTheMainTableDoNotCount() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "v0"))
        #expect(!Self.feed(&t, NetlinkWire.route(table: 100, oif: 2, gateway: NetlinkWire.gw4)))
        #expect(!Self.feed(&t, NetlinkWire.route(table: 252, oif: 2, gateway: NetlinkWire.gw4, tableAttribute: 1000)))
        #expect(t.primary() == nil)
    }

    @Test func aLoopbackDefaultIsNotUsable() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 1, flags: NetlinkWire.usable | NetlinkWire.loopback, name: "lo", hardware: 772))
        Self.feed(&t, NetlinkWire.route(oif: 1))
        #expect(verdict(t, previous: nil) == "offline: default route via lo unusable: lo is a loopback interface")
    }

    @Test func aDeletedLinkTakesItsRoutes() {
        var t = Self.connected()
        let before = t.primary()
        #expect(Self.feed(&t, NetlinkWire.link(NetlinkWire.delLink, index: 2, flags: 0, name: "v0")))
        #expect(verdict(t, previous: before) == "offline: v0 was removed")
        #expect(t.routes.isEmpty)
    }

    @Test func aRepeatedRouteIsKeptOnce() {
        var t = Self.connected()
        Self.feed(&t, NetlinkWire.route(oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.routes.count == 1)
        Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, oif: 2, gateway: NetlinkWire.gw4))
        #expect(t.primary() == nil)
    }
}

@Suite struct InterfaceKindsTests {
    func makeTree(_ files: [String: String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sysfs-\(UUID().uuidString.prefix(8))").path
        for (path, content) in files {
            let full = root + "/" + path
            let dir = path.hasSuffix("/") ? full : (full as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            if path.hasSuffix("/") { continue }
            try content.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return root
    }

    func link(_ name: String, hardware: UInt16 = 1, infoKind: String? = nil) -> RouteTable.Link {
        RouteTable.Link(index: 2, name: name, flags: NetlinkWire.usable, hardwareType: hardware, infoKind: infoKind)
    }

    @Test func kindsFromSysfs() throws {
        let root = try makeTree([
            "wlan0/type": "1\n", "wlan0/wireless/": "",
            "wlp1/type": "1\n", "wlp1/uevent": "DEVTYPE=wlan\nINTERFACE=wlp1\n",
            "wwan0/type": "519\n", "wwan0/uevent": "DEVTYPE=wwan\n",
            "tun0/type": "65534\n", "tun0/tun_flags": "0x1001\n",
            "wg0/type": "65534\n", "wg0/uevent": "DEVTYPE=wireguard\n",
            "ppp0/type": "512\n",
            "eth0/type": "1\n", "eth0/uevent": "INTERFACE=eth0\n",
            "ib0/type": "32\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let kinds = InterfaceKinds(sysfsRoot: root)
        #expect(kinds.kind(of: link("wlan0")) == .wifi)
        #expect(kinds.kind(of: link("wlp1")) == .wifi)
        #expect(kinds.kind(of: link("wwan0", hardware: 519)) == .wwan)
        #expect(kinds.kind(of: link("tun0", hardware: 65534, infoKind: "tun")) == .vpn)
        #expect(kinds.kind(of: link("wg0", hardware: 65534)) == .vpn)
        #expect(kinds.kind(of: link("ppp0", hardware: 512)) == .vpn)
        #expect(kinds.kind(of: link("eth0")) == .ethernet)
        #expect(kinds.kind(of: link("ib0", hardware: 32)) == .other)
        // Not in sysfs (another namespace's view): netlink's own facts decide.
        #expect(kinds.kind(of: link("gone0", hardware: 1)) == .ethernet)
        #expect(kinds.kind(of: link("gone1", hardware: 65534, infoKind: "wireguard")) == .vpn)
    }
}

@Suite struct NetlinkConfigTests {
    @Test func decodesFromAnEmptyTableWithDefaults() throws {
        let c = try NetlinkMonitor.Config.decode(toml: "")
        #expect(c == NetlinkMonitor.Config())
        #expect(c.ignore.contains("docker*") && c.receiveBuffer == 0)
    }

    @Test func rejectsBadValues() {
        #expect { try NetlinkMonitor.Config.decode(toml: "receive_buffer = -1") } throws: {
            ($0 as? ConfigError)?.key == "receive_buffer"
        }
        #expect { try NetlinkMonitor.Config.decode(toml: #"ignore = [""]"#) } throws: { ($0 as? ConfigError)?.key == "ignore" }
    }
}

extension RouteTableTests {
    // MARK: The missing layer, from the cable up

    func offline(_ t: RouteTable, previous: RouteTable.Primary?) -> String {
        let (layer, reason) = t.offline(previous: previous, deprioritised: { $0.hasPrefix("docker") })
        return "\(layer.rawValue): \(reason)"
    }

    @Test func withNoRouteAtAllTheLowestMissingLayerIsNamed() {
        var t = RouteTable()
        Self.feed(&t, NetlinkWire.link(index: 1, flags: NetlinkWire.up | NetlinkWire.running | NetlinkWire.loopback, name: "lo", hardware: 772))
        Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "eth0"))
        // docker0 is up with an address, but it never leads to the internet.
        Self.feed(&t, NetlinkWire.link(index: 3, flags: NetlinkWire.usable, name: "docker0"))
        Self.feed(&t, NetlinkWire.address(prefix: 16, index: 3, [172, 17, 0, 1]))
        #expect(offline(t, previous: nil) == "link: no network interface is up")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.up, name: "eth0"))
        #expect(offline(t, previous: nil) == "carrier: eth0 has no carrier")
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.usable, name: "eth0"))
        // An IPv6 link-local address alone reaches no router.
        Self.feed(&t, NetlinkWire.address(family: 10, prefix: 64, index: 2, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [2]))
        #expect(offline(t, previous: nil) == "address: eth0 has no address")
        Self.feed(&t, NetlinkWire.address(prefix: 24, index: 2, [10, 77, 0, 2]))
        #expect(offline(t, previous: nil) == "route: no default route")
    }

    @Test func losingTheRouteNamesTheLayerThatWentAway() {
        var t = Self.connected()
        let before = t.primary()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: NetlinkWire.up, name: "v0"))
        #expect(offline(t, previous: before) == "carrier: carrier lost on v0")
        t = Self.connected()
        Self.feed(&t, NetlinkWire.link(index: 2, flags: 0, name: "v0"))
        #expect(offline(t, previous: before) == "link: v0 is down")
        t = Self.connected()
        Self.feed(&t, NetlinkWire.address(NetlinkWire.delAddr, prefix: 24, index: 2, [10, 77, 0, 2]))
        #expect(offline(t, previous: before) == "address: address 10.77.0.2/24 removed from v0")
        t = Self.connected()
        Self.feed(&t, NetlinkWire.route(NetlinkWire.delRoute, oif: 2, gateway: NetlinkWire.gw4))
        #expect(offline(t, previous: before) == "route: default route via v0 removed")
        t = Self.connected()
        Self.feed(&t, NetlinkWire.route(flags: NetlinkWire.replace, routeType: 6))
        #expect(offline(t, previous: before) == "route: default route via v0 replaced by a blackhole route")
    }
}
