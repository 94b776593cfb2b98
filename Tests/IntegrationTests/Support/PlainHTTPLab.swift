import Foundation
import LifelineTestKit

/// The probe lab's raw HTTP servers (`Resources/plain_http_server.py`): exact
/// replies on the wire, every request's head logged; and a resolver that names
/// the default check host, so the daemon can run with its built-in defaults.
extension ProbeLab {
    enum Plain: String { case ok, nocontent, chunked, relative, absolute, garbage, silent, cookies }

    func plainLogPath(_ mode: Plain) -> String { workDir.appendingPathComponent("plain-\(mode.rawValue).log").path }

    /// Starts a raw server on the root side and waits until it listens; the
    /// lab stops it with its other servers.
    func startPlainServer(_ mode: Plain, port: Int = 8080) throws -> Spawned {
        let script = URL(fileURLWithPath: Self.script).deletingLastPathComponent().appendingPathComponent("plain_http_server.py").path
        return try net.startServer(.outside, script: script, arguments: [mode.rawValue, hostAddress, "\(port)", plainLogPath(mode)],
                                   name: "plain-\(mode.rawValue)-\(port)")
    }

    /// The request heads the raw server got, one per request.
    func plainRequests(_ mode: Plain) -> [String] {
        ((try? String(contentsOfFile: plainLogPath(mode), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// dnsmasq on the host end answering `name` with the host end's address
    /// (nothing else); ready once the namespace resolves it.
    func startResolver(naming name: String) throws -> Spawned {
        let dns = try net.spawn(.outside, [
            "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--bind-interfaces", "--listen-address=\(hostAddress)", "--port=53",
            "--pid-file=\(workDir.appendingPathComponent("plain-dnsmasq.pid").path)",
            "--address=/\(name)/\(hostAddress)", "--log-facility=-",
        ])
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let r = try? Harness.run(net.argv(.inside, ["python3", "-c",
                                      "import socket; socket.setdefaulttimeout(1); print(socket.gethostbyname('\(name)'))"]))
            if r?.status == 0, r?.stdout.contains(hostAddress) == true { return dns }
            guard dns.isRunning else { break }
            usleep(50_000)
        }
        dns.stop()
        throw LabError(description: "dnsmasq did not start answering for \(name)")
    }

    /// The shared libraries a running process has mapped (its /proc maps), by file name.
    static func mappedLibraries(pid: Int32) -> Set<String> {
        // Through cat: /proc files have no size, and a read by size stops at the first page.
        let maps = (try? Harness.run(["cat", "/proc/\(pid)/maps"]).stdout) ?? ""
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.flatMap { $0.hasPrefix("/") ? $0.split(separator: "/").last.map(String.init) : nil }
        })
    }
}
