import Foundation
import LifelineTestKit

/// The probe lab with more than one check server: each on an address of its
/// own on the lab's host end, so one can be blackholed while another answers,
/// and a resolver (dnsmasq) that names them, or blocks one as a DNS blocker
/// does (0.0.0.0).
extension ProbeLab {
    /// Adds `10.214.N.<last>` to the host end and returns it.
    func addHostAddress(last: Int) throws -> String {
        let address = hostAddress.split(separator: ".").dropLast().joined(separator: ".") + ".\(last)"
        try Self.sh(["ip", "addr", "add", "\(address)/24", "dev", hostInterface])
        return address
    }

    /// A check server (`Resources/probe_server.py`) on `host`; its requests
    /// go to the log named `tag`. Stopped with the lab's other servers.
    func startServer(_ mode: Mode, host: String, port: Int = 8080, tag: String) throws -> Spawned {
        try net.startServer(.outside, arguments: [mode.rawValue, host, "\(port)", taggedLog(tag)], name: tag)
    }

    func taggedLog(_ tag: String) -> String { workDir.appendingPathComponent("\(tag).log").path }

    func requests(tag: String) -> [String] {
        ((try? String(contentsOfFile: taggedLog(tag), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Packets from the namespace to `address` are dropped; everything else passes.
    func blackhole(address: String) throws {
        try net.filter(.outside, name: table, rule: ["iifname", hostInterface, "ip", "daddr", address, "drop"])
    }

    /// dnsmasq on the host end answering each name with its address (0.0.0.0:
    /// blocked, as Pi-hole answers); ready once the namespace resolves the last.
    func startResolver(answers: [(name: String, address: String)]) throws -> Spawned {
        let dns = try net.spawn(.outside, [
            "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--bind-interfaces", "--listen-address=\(hostAddress)", "--port=53",
            "--pid-file=\(workDir.appendingPathComponent("endpoints-dnsmasq.pid").path)", "--log-facility=-",
        ] + answers.map { "--address=/\($0.name)/\($0.address)" })
        let probe = answers.last { $0.address != "0.0.0.0" } ?? answers[0]
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let r = try? Harness.run(net.argv(.inside, ["python3", "-c",
                                      "import socket; socket.setdefaulttimeout(1); print(socket.gethostbyname('\(probe.name)'))"]))
            if r?.status == 0, r?.stdout.contains(probe.address) == true { return dns }
            guard dns.isRunning else { break }
            usleep(50_000)
        }
        dns.stop()
        throw LabError(description: "dnsmasq did not start answering")
    }
}
