import Foundation
import LifelineTestKit

/// A VPN in two network namespaces, as a user has one: the client (where the
/// daemon runs) reaches the VPN server over a veth, its link underneath, and
/// the default route goes into the tunnel. The server namespace is also the
/// client's router on the veth (its address `routerAddress`) and keeps the VPN
/// endpoint on an address of its own behind that router (`endpointAddress`),
/// so the client reaches the endpoint through a host route via the router, as
/// OpenVPN's redirect-gateway and NetworkManager set it up. The check server
/// listens on the server's tunnel address only: it answers through the tunnel
/// or not at all.
///
/// Every name carries the lab's tag: namespaces, interfaces, the
/// userspace WireGuard's control socket (`/var/run/wireguard/<if>.sock` is one
/// folder for every namespace) and the nftables tables.
final class VPNLab: @unchecked Sendable {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "wireguard-go", "wg"])
    static let openVPNRequirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "openvpn"])

    enum Flavour { case wireguard, openvpn }
    /// How the tunnel carries the default route: a host route to the endpoint
    /// via the router and the default into the tunnel (OpenVPN, NetworkManager),
    /// or `wg-quick`'s policy routing: the main table keeps the default via the
    /// router, a table of its own sends everything not marked into the tunnel.
    /// `def1`: OpenVPN's `redirect-gateway def1`. The main table's default
    /// stays via the router; OpenVPN itself adds a host route to the endpoint
    /// and two /1 routes into the tunnel when it comes up, and removes them
    /// when it ends. Its client starts only on `bringOpenVPNUp()`.
    enum Routing { case hostRoute, policy, def1 }

    let flavour: Flavour
    let net: NetnsLab
    var tag: String { net.tag }
    var client: String { net.namespace }
    var server: String { net.upstream! }
    /// The link underneath, in the client namespace, and its peer in the server's.
    var carrier: String { net.interface }
    var serverLink: String { net.upstreamInterface }
    /// The tunnel's interface in each namespace.
    let tunnel: String
    let serverTunnel: String
    let clientAddress: String
    let routerAddress: String
    let endpointAddress: String
    let tunnelClientAddress: String
    let tunnelServerAddress: String
    let port: Int
    let fwmark = 51820
    var workDir: URL { net.workDir }
    private var processes: [Spawned] = []
    /// The client side's VPN program: it owns the tunnel's interface.
    private var clientProcess: Spawned?
    private var checkServer: Spawned?
    private var serverTables: [String] = []

    var checkURL: String { "http://\(tunnelServerAddress):8080/check_network_status.txt" }

    init(_ flavour: Flavour = .wireguard, routing: Routing = .hostRoute) throws {
        self.flavour = flavour
        let tag = NetnsLab.uniqueTag()
        // Every address lives inside the lab's two namespaces: any subnet will do.
        let n = Int.random(in: 1...250)
        net = try NetnsLab(prefix: "llvpnc", upstreamPrefix: "llvpns", interfaces: (inside: "lvc\(tag)", outside: "lvs\(tag)"), tag: tag)
        tunnel = "ltc\(tag)"
        serverTunnel = "lts\(tag)"
        clientAddress = "10.215.\(n).2"
        routerAddress = "10.215.\(n).1"
        endpointAddress = "10.217.\(n).1"
        tunnelClientAddress = "10.216.\(n).2"
        tunnelServerAddress = "10.216.\(n).1"
        port = Int.random(in: 20000...29999)
        // Name lookups in the client go to the server's tunnel address: through the tunnel, never outside.
        try net.resolver(tunnelServerAddress)
        // No IPv6 on the link underneath: its neighbour discovery and router
        // solicitations would be packets outside the tunnel that prove nothing.
        try inClient(["sysctl", "-q", "-w", "net.ipv6.conf.\(carrier).disable_ipv6=1"])
        try inClient(["ip", "addr", "add", "\(clientAddress)/24", "dev", carrier])
        try inClient(["ip", "link", "set", carrier, "up"])
        try inServer(["ip", "addr", "add", "\(routerAddress)/24", "dev", serverLink])
        try inServer(["ip", "addr", "add", "\(endpointAddress)/32", "dev", "lo"])
        try inServer(["ip", "link", "set", serverLink, "up"])
        if routing == .def1 {
            precondition(flavour == .openvpn, "def1 is OpenVPN's")
            try inClient(["ip", "route", "add", "default", "via", routerAddress, "dev", carrier])
            try startOpenVPNServer()
            return
        }
        switch flavour {
        case .wireguard: try startWireGuard()
        case .openvpn: try startOpenVPN()
        }
        try inClient(["ip", "route", "add", "\(endpointAddress)/32", "via", routerAddress, "dev", carrier])
        switch routing {
        case .def1: break
        case .hostRoute:
            try inClient(["ip", "route", "add", "default", "dev", tunnel])
        case .policy:
            try inClient(["ip", "route", "add", "default", "via", routerAddress, "dev", carrier])
            try inClient(["wg", "set", tunnel, "fwmark", "\(fwmark)"])
            try inClient(["ip", "route", "add", "default", "dev", tunnel, "table", "\(fwmark)"])
            try addPolicyRules()
        }
    }

    /// `wg-quick`'s two rules: everything but the tunnel's own datagrams into
    /// the tunnel's table, and the main table for all but its default route.
    func addPolicyRules() throws {
        try inClient(["ip", "rule", "add", "not", "fwmark", "\(fwmark)", "table", "\(fwmark)"])
        try inClient(["ip", "rule", "add", "table", "main", "suppress_prefixlength", "0"])
    }

    func removePolicyRules() throws {
        try inClient(["ip", "rule", "del", "not", "fwmark", "\(fwmark)", "table", "\(fwmark)"])
        try inClient(["ip", "rule", "del", "table", "main", "suppress_prefixlength", "0"])
    }

    deinit {
        checkServer?.stop()
        for p in processes.reversed() { p.stop() }
        net.teardown()
        try? FileManager.default.removeItem(atPath: "/var/run/wireguard/\(tunnel).sock")
        try? FileManager.default.removeItem(atPath: "/var/run/wireguard/\(serverTunnel).sock")
    }

    @discardableResult
    func sh(_ argv: [String]) throws -> String { try NetnsLab.sh(argv) }
    @discardableResult
    func inClient(_ argv: [String]) throws -> String { try net.run(.inside, argv) }
    @discardableResult
    func inServer(_ argv: [String]) throws -> String { try net.run(.outside, argv) }

    // MARK: WireGuard (userspace: this kernel may have no module)

    private func startWireGuard() throws {
        let clientKey = try privateKey("client"), serverKey = try privateKey("server")
        for (side, name) in [(NetnsLab.Side.inside, tunnel), (.outside, serverTunnel)] {
            processes.append(try Spawned(net.argv(side, ["wireguard-go", "-f", name]),
                                         environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                                                       "LOG_LEVEL": "error"]))
            try waitFor("wireguard-go's \(name)") { FileManager.default.fileExists(atPath: "/var/run/wireguard/\(name).sock") }
        }
        clientProcess = processes.first
        try inServer(["wg", "set", serverTunnel, "listen-port", "\(port)", "private-key", serverKey.path,
                      "peer", try publicKey(clientKey), "allowed-ips", "\(tunnelClientAddress)/32"])
        try inServer(["ip", "addr", "add", "\(tunnelServerAddress)/24", "dev", serverTunnel])
        try inServer(["ip", "link", "set", serverTunnel, "up"])
        try inClient(["wg", "set", tunnel, "private-key", clientKey.path,
                      "peer", try publicKey(serverKey), "allowed-ips", "0.0.0.0/0", "endpoint", "\(endpointAddress):\(port)"])
        try inClient(["ip", "addr", "add", "\(tunnelClientAddress)/24", "dev", tunnel])
        try inClient(["ip", "link", "set", tunnel, "up"])
    }

    private func privateKey(_ name: String) throws -> URL {
        let key = try sh(["wg", "genkey"])
        let url = workDir.appendingPathComponent("\(name).key")
        FileManager.default.createFile(atPath: url.path, contents: Data(key.utf8), attributes: [.posixPermissions: 0o600])
        return url
    }

    private func publicKey(_ privateKey: URL) throws -> String {
        let r = try Harness.run(["wg", "pubkey"], stdin: try String(contentsOf: privateKey, encoding: .utf8))
        guard r.status == 0 else { throw NetnsLab.Failure(description: "wg pubkey: \(r.stderr)") }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: OpenVPN (static key, tun)

    private func startOpenVPN() throws {
        try startOpenVPNServer()
        try startOpenVPNClient(extra: [])
    }

    private var openVPNKey: String { workDir.appendingPathComponent("static.key").path }

    /// Static-key mode is deprecated (2.7 drops it) but needs no certificates; a throwaway key is enough here.
    private var openVPNCommon: [String] {
        ["--dev-type", "tun", "--proto", "udp", "--secret", openVPNKey, "--cipher", "AES-256-CBC",
         "--verb", "1", "--ping", "2", "--ping-restart", "0"]
    }

    private func startOpenVPNServer() throws {
        try sh(["openvpn", "--genkey", "secret", openVPNKey])
        processes.append(try Spawned(net.argv(.outside, ["openvpn", "--dev", serverTunnel, "--lport", "\(port)",
                                      "--local", endpointAddress, "--ifconfig", tunnelServerAddress, tunnelClientAddress] + openVPNCommon),
                                     stdout: .file(workDir.appendingPathComponent("openvpn-server.log").path), stderr: .stdout))
        try waitFor("openvpn's server tunnel") {
            (try? self.inServer(["ip", "link", "show", self.serverTunnel, "up"]))?.contains("UP") == true
        }
    }

    private func startOpenVPNClient(extra: [String]) throws {
        processes.append(try Spawned(net.argv(.inside, ["openvpn", "--dev", tunnel, "--remote", endpointAddress,
                                      "\(port)", "--nobind", "--ifconfig", tunnelClientAddress, tunnelServerAddress] + openVPNCommon + extra),
                                     stdout: .file(workDir.appendingPathComponent("openvpn-client.log").path), stderr: .stdout))
        clientProcess = processes.last
        try waitFor("openvpn's client tunnel") {
            (try? self.inClient(["ip", "link", "show", self.tunnel, "up"]))?.contains("UP") == true
        }
    }

    /// The `def1` lab's client starts, with `redirect-gateway def1`; returns
    /// once both of its /1 routes are in the main table.
    func bringOpenVPNUp() throws {
        try startOpenVPNClient(extra: ["--redirect-gateway", "def1"])
        try waitFor("openvpn's /1 routes") {
            let routes = (try? self.inClient(["ip", "-4", "route", "show", "table", "main"])) ?? ""
            return routes.contains("0.0.0.0/1 ") && routes.contains("128.0.0.0/1 ")
        }
    }

    // MARK: The check server, the faults, the leak counter

    /// The check server on the server's tunnel address, waited for until it listens.
    func startCheckServer() throws {
        checkServer = try net.startServer(.outside, arguments: ["ok", tunnelServerAddress, "8080",
                                                                workDir.appendingPathComponent("check.log").path], name: "check")
    }

    /// The VPN server goes silent: its tunnel's datagrams are dropped as they
    /// arrive. The router on the veth still answers ARP.
    func silenceVPNServer() throws {
        try serverDrop(family: "inet", rule: ["udp", "dport", "\(port)", "drop"])
    }

    /// The link underneath loses its router: ARP from the client is dropped on
    /// the server side, and the client forgets what it had learnt.
    func silenceRouter() throws {
        try serverDrop(family: "arp", rule: ["iifname", serverLink, "drop"])
        try inClient(["ip", "neigh", "flush", "dev", carrier])
    }

    /// A kill switch, as VPN clients set one: the link underneath lets out
    /// nothing but the tunnel's own datagrams.
    func killSwitch() throws {
        let table = try net.filter(.inside, name: "llvpnkill_\(tag)", hook: "output", priority: 10,
                                   rule: ["oifname", carrier, "ip", "daddr", endpointAddress, "udp", "dport", "\(port)", "accept"])
        try net.addRule(.inside, table: table, hook: "output", rule: ["oifname", carrier, "drop"])
    }

    /// The tunnel taken down by its owner: the VPN program ends, its
    /// interface goes, and with it the default route.
    func takeTunnelDown() throws {
        _ = clientProcess?.stop()
        try waitFor("\(tunnel) to go") { (try? self.inClient(["ip", "link", "show", self.tunnel])) == nil }
    }

    private func serverDrop(family: String, rule: [String]) throws {
        let name = "llvpn_\(tag)_\(serverTables.count)"
        try net.filter(.outside, family: family, name: name, rule: rule)
        serverTables.append(name)
    }

    /// Counts, in the client namespace, every packet that leaves by the link
    /// underneath other than the tunnel's own datagrams to the VPN server's
    /// port (ARP is not seen by an `inet` table): what the daemon might send
    /// outside the tunnel to find out what is wrong.
    func startLeakCounter() throws {
        let table = try net.filter(.inside, name: "llvpnleak_\(tag)", hook: "output",
                                   rule: ["oifname", carrier, "ip", "daddr", endpointAddress, "udp", "dport", "\(port)", "accept"])
        // One counter per protocol, so a leak says what it was.
        for proto in ["tcp", "udp", "icmp", "ipv6-icmp"] {
            try net.addRule(.inside, table: table, hook: "output", rule: ["oifname", carrier, "meta", "l4proto", proto, "counter", "accept"])
        }
        try net.addRule(.inside, table: table, hook: "output", rule: ["oifname", carrier, "counter"])
    }

    /// Packets the leak counter saw leave outside the tunnel, and its rules with their counts.
    func leaks() throws -> (packets: Int, listing: String) {
        let listing = try inClient(["nft", "list", "table", "inet", "llvpnleak_\(tag)"])
        var total = 0
        var rest = Substring(listing)
        while let range = rest.range(of: "counter packets ") {
            total += Int(rest[range.upperBound...].prefix { $0.isNumber }) ?? 0
            rest = rest[range.upperBound...]
        }
        return (total, listing)
    }

    private func waitFor(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return }
            usleep(20_000)
        }
        throw NetnsLab.Failure(description: "\(what) did not come up within \(timeout)")
    }
}
