import Foundation
import LifelineTestKit
import Testing

/// The network lab itself: what it builds carries traffic, and a test that
/// throws half-way still leaves nothing of it on the machine.
@Suite struct NetnsLabTests {
    struct Thrown: Error {}

    /// The names a lab made, kept to look for them once it is gone.
    struct Made {
        var namespaces: [String] = []
        var hostLink: String?
        var table: String?
        var server: Spawned?
    }

    /// What of `made` the machine still shows: namespaces, their /etc/netns
    /// folders, the host end of the veth, the nftables table, the server.
    static func traces(_ made: Made) -> [String] {
        let namespaces = (try? Harness.run(["ip", "netns", "list"]).stdout) ?? ""
        let links = (try? Harness.run(["ip", "-o", "link", "show"]).stdout) ?? ""
        let tables = (try? Harness.run(["nft", "list", "tables"]).stdout) ?? ""
        var found = made.namespaces.filter { namespaces.contains($0) }
        found += made.namespaces.map { "/etc/netns/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        if let link = made.hostLink, links.contains(" \(link)@") { found.append(link) }
        if let table = made.table, tables.contains(table) { found.append(table) }
        if made.server?.isRunning == true { found.append("the check server") }
        return found
    }

    /// The HTTP status a client inside the lab gets from `url`.
    static func fetch(_ lab: NetnsLab, _ url: String) throws -> String {
        try lab.run(.inside, ["python3", "-c", "import urllib.request; print(urllib.request.urlopen('\(url)', timeout=2).status)"])
    }

    /// A lab against this machine, used as a test would, then a throw.
    static func hostLab(_ made: inout Made) throws {
        let lab = try NetnsLab(prefix: "llnt")
        let host = "10.214.\(ProbeLab.freeSubnet()).1", inside = host.dropLast() + "2"
        made.namespaces = [lab.namespace]
        made.hostLink = lab.upstreamInterface
        try lab.resolver(host)
        try lab.connect(inside: "\(inside)/24", outside: "\(host)/24")
        made.server = try lab.startServer(.outside, arguments: ["ok", host, "8080", lab.workDir.appendingPathComponent("log").path],
                                          name: "check")
        #expect(try fetch(lab, "http://\(host):8080/check_network_status.txt").hasPrefix("20"))
        made.table = try lab.filter(.outside, name: "llnt_\(lab.tag)", rule: ["iifname", lab.upstreamInterface, "drop"])
        try lab.link(.inside, up: false)
        #expect(try lab.ip(.inside, "link", "show", lab.interface).contains("state DOWN"))
        throw Thrown()
    }

    /// Two namespaces, the server in the second one, then a throw.
    static func pairLab(_ made: inout Made) throws {
        let lab = try NetnsLab(prefix: "llnt", upstreamPrefix: "llnu", interfaces: (inside: "v0", outside: "v1"))
        made.namespaces = [lab.namespace, lab.upstream!]
        try lab.connect(inside: "10.77.0.2/24", outside: "10.77.0.1/24")
        made.server = try lab.startServer(.outside, arguments: ["ok", "10.77.0.1", "8080", lab.workDir.appendingPathComponent("log").path],
                                          name: "check")
        #expect(try fetch(lab, "http://10.77.0.1:8080/check_network_status.txt").hasPrefix("20"))
        throw Thrown()
    }

    @Test(.requires(.rootAnd(["ip", "nft", "python3"]))) func aLabOnThisMachineLeavesNothingWhenTheTestThrows() throws {
        var made = Made()
        #expect(throws: Thrown.self) { try Self.hostLab(&made) }
        #expect(made.namespaces.count == 1 && made.table != nil, "the lab was not built: nothing to look for")
        #expect(Self.traces(made).isEmpty, "left behind: \(Self.traces(made))")
    }

    @Test(.requires(.rootAnd(["ip", "python3"]))) func aPairOfNamespacesLeavesNothingWhenTheTestThrows() throws {
        var made = Made()
        #expect(throws: Thrown.self) { try Self.pairLab(&made) }
        #expect(made.namespaces.count == 2 && made.server != nil, "the lab was not built: nothing to look for")
        #expect(Self.traces(made).isEmpty, "left behind: \(Self.traces(made))")
    }
}
