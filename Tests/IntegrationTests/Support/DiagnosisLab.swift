import Foundation
import LifelineTestKit

/// The probe lab with the faults of the layered diagnosis: a router that stops
/// answering ARP, a resolver that stops answering, and a local DNS server
/// (dnsmasq) that names the check server, so the probe can use a host name.
/// Its nftables tables carry the lab's tag and go with it.
final class DiagnosisLab: @unchecked Sendable {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "dnsmasq"])
    static let checkHost = "check.lifeline.test"

    let lab: ProbeLab
    private var dns: Spawned?
    private var tables = 0
    /// The hex group of the lab's IPv6 prefix (fd00:GROUP::/64), one no
    /// interface of this machine has yet: labs running at the same time must
    /// not share it.
    let prefixGroup: String

    init() throws {
        lab = try ProbeLab()
        let used = (try? Harness.run(["ip", "-6", "-o", "addr", "show"]).stdout) ?? ""
        var group = 0x100 + Int((UInt64(lab.net.tag, radix: 16) ?? 0) % 0xFE00)
        while used.contains(" fd00:\(String(group, radix: 16))::") { group = 0x100 + (group - 0xFF) % 0xFE00 }
        prefixGroup = String(group, radix: 16)
    }

    /// The check URL by name: the namespace's resolver is the lab's host end.
    var checkURLByName: String { "http://\(Self.checkHost):8080/check_network_status.txt" }

    /// dnsmasq on the host end, port 53, answering only for the check host.
    func startDNS(ipv6: Bool = false) throws {
        let pidFile = lab.workDir.appendingPathComponent("dnsmasq.pid").path
        dns = try lab.net.spawn(.outside, [
            "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--bind-interfaces", "--listen-address=\(lab.hostAddress)", "--port=53", "--pid-file=\(pidFile)",
            "--address=/\(Self.checkHost)/\(lab.hostAddress)", "--log-facility=-",
        ] + (ipv6 ? ["--address=/\(Self.checkHost)/\(hostAddress6)"] : []))
        // Ready once it answers: a bounded poll of a real query from the namespace.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if resolvesInNamespace() { return }
            guard dns?.isRunning == true else { break }
            usleep(50_000)
        }
        throw ProbeLab.LabError(description: "dnsmasq did not start answering on \(lab.hostAddress):53")
    }

    /// Whether the namespace resolves the check host now (getaddrinfo, as libcurl does).
    func resolvesInNamespace() -> Bool {
        let r = try? Harness.run(lab.net.argv(.inside, ["python3", "-c",
                                  "import socket; socket.setdefaulttimeout(1); print(socket.gethostbyname('\(Self.checkHost)'))"]))
        return r?.status == 0 && r?.stdout.contains(lab.hostAddress) == true
    }

    /// Whether a TCP connection from the namespace to `address:port` opens within a second.
    func tcpConnects(to address: String, port: Int) -> Bool {
        let r = try? Harness.run(lab.net.argv(.inside, ["python3", "-c",
                                  "import socket; socket.create_connection(('\(address)', \(port)), timeout=1).close()"]))
        return r?.status == 0
    }

    /// The router stops answering ARP: requests from the namespace are dropped
    /// on the host end. The namespace forgets what it had learnt, as after the
    /// router restarted, so the next packet has to ask again.
    func silenceRouter() throws {
        try addDropTable(family: "arp", rule: ["iifname", lab.hostInterface, "drop"])
        try lab.net.ip(.inside, "neigh", "flush", "dev", lab.namespaceInterface)
    }

    /// DNS queries from the namespace are dropped; everything else passes.
    func silenceDNS() throws {
        try addDropTable(family: "inet", rule: ["iifname", lab.hostInterface, "meta", "l4proto", "{ udp, tcp }", "th", "dport", "53", "drop"])
    }

    /// Connections to the check port are dropped; the router and DNS still answer.
    func dropCheckPort() throws {
        try addDropTable(family: "inet", rule: ["iifname", lab.hostInterface, "tcp", "dport", "8080", "drop"])
    }

    fileprivate func addDropTable(family: String, rule: [String]) throws {
        try lab.net.filter(.outside, family: family, name: "\(lab.table)_\(family)\(tables)", rule: rule)
        tables += 1
    }
}

extension DiagnosisLab {
    /// `lifeline diagnose` run in the namespace as a user would, in a UTF-8
    /// locale, with an empty config folder (the probe's defaults, `url` given).
    func diagnose(url: String, json: Bool = false, config toml: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let config = lab.workDir.appendingPathComponent("diagnose-config").path
        try FileManager.default.createDirectory(atPath: config + "/lifeline", withIntermediateDirectories: true)
        if let toml { try toml.write(toFile: config + "/lifeline/config.toml", atomically: true, encoding: .utf8) }
        let env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LC_ALL": "C.UTF-8",
                   "XDG_CONFIG_HOME": config, "HOME": lab.workDir.path]
        return try Harness.run(["ip", "netns", "exec", lab.namespace, Harness.binary, "diagnose", "--url", url, "--timeout", "1s"]
                               + (json ? ["--json"] : []), environment: env)
    }

    /// The checklist's (mark, layer) pairs in the order printed, e.g. ("✓", "link").
    static func marks(_ checklist: String) -> [String] {
        checklist.split(separator: "\n").filter { $0.hasPrefix("  ") }.map { line in
            let words = line.split(separator: " ")
            let layer = words.count > 2 && words[1] == "default" ? "default route" : String(words.count > 1 ? words[1] : "")
            return "\(words.first ?? "") \(layer)"
        }
    }
}

extension DiagnosisLab {
    /// The namespace's IPv6 address and the host end's, in a prefix tagged like the lab.
    var hostAddress6: String { "fd00:\(prefixGroup)::1" }
    var namespaceAddress6: String { "fd00:\(prefixGroup)::2" }

    /// Gives the lab IPv6 with a default route via the host end, and the check
    /// host an AAAA record; with `blackholed`, IPv6 from the namespace is
    /// dropped on the host end, all but neighbour discovery: the router
    /// answers, the IPv6 internet behind it does not (IPv4 untouched).
    func enableIPv6(blackholed: Bool) throws {
        try lab.net.address(.outside, "\(hostAddress6)/64")
        try lab.net.address(.inside, "\(namespaceAddress6)/64")
        try lab.net.defaultRoute(via: hostAddress6)
        if blackholed {
            try addDropTable(family: "ip6", rule: ["iifname", lab.hostInterface, "meta", "l4proto", "!=", "ipv6-icmp", "drop"])
        }
    }
}

extension DiagnosisLab {
    /// The router's link-local address on the lab link, as routers announce themselves.
    static let routerLinkLocal = "fe80::1"

    /// IPv6 through a link-local router, as on most home networks: the host end
    /// answers as fe80::1, the namespace has a single address (/128, so the
    /// check server is not on its link: every packet goes via the router) and
    /// a default route via fe80::1. With `silentRouter`, the host end drops the
    /// namespace's neighbour solicitations: the router never answers neighbour
    /// discovery, and IPv4 is untouched.
    func enableIPv6ViaLinkLocalRouter(silentRouter: Bool) throws {
        try lab.net.address(.outside, "\(hostAddress6)/64")
        try lab.net.address(.outside, "\(Self.routerLinkLocal)/64")
        try lab.net.address(.inside, "\(namespaceAddress6)/128")
        try lab.net.ip(.inside, "-6", "route", "add", "default", "via", Self.routerLinkLocal, "dev", lab.namespaceInterface)
        if silentRouter {
            try addDropTable(family: "ip6", rule: ["iifname", lab.hostInterface, "icmpv6", "type", "nd-neighbor-solicit", "drop"])
        }
    }

    /// The lines of one family's block of a `diagnose` checklist ("IPv4" or "IPv6").
    static func block(_ checklist: String, _ family: String) -> String {
        var lines: [Substring] = []
        var inside = false
        for line in checklist.split(separator: "\n") {
            if !line.hasPrefix(" ") { inside = line == family } else if inside { lines.append(line) }
        }
        return lines.joined(separator: "\n")
    }
}
