import Foundation
import LifelineTestKit
import Synchronization

/// The one place the integration tests build a network: a private network
/// namespace (`namespace`, where the code under test runs) joined by a veth
/// pair to its far side, which is either this machine (`upstream` nil: check
/// servers on the host end) or a second private namespace (`upstream`). The
/// specialised labs (probe, netlink pair, VPN) add their own pieces on top.
///
/// Every name carries a tag unique to this test process and this lab, so labs
/// of tests running in parallel, or of other test runs on the machine, never
/// meet. `teardown()` removes everything the lab made (processes, nftables
/// tables, resolver files, the namespaces and with them the veth); it runs
/// synchronously from `deinit` too, so a test that fails or throws still
/// leaves nothing behind.
final class NetnsLab: @unchecked Sendable {
    /// Which end of the veth a command or an address is for.
    enum Side { case inside, outside }

    struct Failure: Error, CustomStringConvertible { var description: String }

    let tag: String
    /// The namespace the code under test runs in.
    let namespace: String
    /// The far side's namespace; nil when the far side is this machine.
    let upstream: String?
    /// The veth end inside `namespace`, and the one on the far side.
    let interface: String
    let upstreamInterface: String
    /// A private temporary folder, removed with the lab.
    let workDir: URL

    /// What teardown undoes: processes started, nftables tables made on this
    /// machine (tables inside a lab namespace go with it).
    private struct Made {
        var processes: [Spawned] = []
        var hostTables: [(family: String, name: String)] = []
        var tornDown = false
    }
    private let made = Mutex(Made())

    /// A unique tag: this process's id and a counter, in hex (at most 9
    /// characters, so `prefix + tag` fits the kernel's 15-byte interface names).
    static func uniqueTag() -> String {
        counter.withLock { n in
            n += 1
            let count = String(n & 0xFFF, radix: 16)
            return String(getpid(), radix: 16) + String(repeating: "0", count: 3 - count.count) + count
        }
    }
    private static let counter = Mutex(0)

    /// Creates `namespace` (named `<prefix>-<tag>`), and `upstream`
    /// (`<upstreamPrefix>-<tag>`) unless the far side is this machine, the veth
    /// pair between them, and brings up loopback in each lab namespace. The
    /// veth ends stay down without addresses: `address`, `link(_:up:)` and
    /// `defaultRoute` set them up, or `connect` does all three.
    /// `interfaces` names the two ends; by default `<prefix>a<tag>` inside and
    /// `<prefix>b<tag>` outside.
    init(prefix: String, upstreamPrefix: String? = nil, interfaces: (inside: String, outside: String)? = nil,
         tag: String = NetnsLab.uniqueTag()) throws {
        self.tag = tag
        namespace = "\(prefix)-\(tag)"
        upstream = upstreamPrefix.map { "\($0)-\(tag)" }
        interface = interfaces?.inside ?? "\(prefix.prefix(3))a\(tag)"
        upstreamInterface = interfaces?.outside ?? "\(prefix.prefix(3))b\(tag)"
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-\(prefix)-\(tag)")
        do {
            try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
            try Self.sh(["ip", "netns", "add", namespace])
            if let upstream { try Self.sh(["ip", "netns", "add", upstream]) }
            try Self.sh(["ip", "link", "add", interface, "netns", namespace, "type", "veth", "peer", "name", upstreamInterface]
                        + (upstream.map { ["netns", $0] } ?? []))
            try ip(.inside, "link", "set", "lo", "up")
            if upstream != nil { try ip(.outside, "link", "set", "lo", "up") }
        } catch {
            teardown()
            throw error
        }
    }

    deinit { teardown() }

    /// Removes everything the lab made; safe to call more than once.
    func teardown() {
        let undo = made.withLock { made in
            defer { made = Made(tornDown: true) }
            return made
        }
        guard !undo.tornDown else { return }
        for p in undo.processes.reversed() { p.stop() }
        for t in undo.hostTables { _ = try? Harness.run(["nft", "delete", "table", t.family, t.name]) }
        // What still runs in a lab namespace (a server started by a test, an
        // `ip netns exec` child) would keep it alive without its name.
        for ns in [namespace] + (upstream.map { [$0] } ?? []) {
            let pids = (try? Harness.run(["ip", "netns", "pids", ns]).stdout) ?? ""
            for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
            _ = try? Harness.run(["ip", "netns", "del", ns])
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(ns)")
        }
        // Deleting the namespace deletes the veth; the host end, if the
        // namespace could not be made, is deleted by name.
        if upstream == nil { _ = try? Harness.run(["ip", "link", "del", upstreamInterface]) }
        try? FileManager.default.removeItem(at: workDir)
    }

    // MARK: Commands

    /// Runs `argv` to completion; its standard output, or an error naming the
    /// command and what it wrote to standard error.
    @discardableResult
    static func sh(_ argv: [String], stdin: String? = nil) throws -> String {
        let r = try Harness.run(argv, stdin: stdin)
        guard r.status == 0 else {
            throw Failure(description: "\(argv.joined(separator: " ")) failed (\(r.status)): \(r.stderr)")
        }
        return r.stdout
    }

    /// The namespace of `side`; nil for the outside when it is this machine.
    func namespace(_ side: Side) -> String? { side == .inside ? namespace : upstream }

    /// The interface of `side`.
    func interface(_ side: Side) -> String { side == .inside ? interface : upstreamInterface }

    /// `argv` prefixed to run in `side`'s namespace.
    func argv(_ side: Side, _ argv: [String]) -> [String] {
        namespace(side).map { ["ip", "netns", "exec", $0] + argv } ?? argv
    }

    /// Runs `argv` in `side`'s namespace (or on this machine) to completion.
    @discardableResult
    func run(_ side: Side, _ argv: [String]) throws -> String { try Self.sh(self.argv(side, argv)) }

    /// `ip ARGS` for `side`.
    @discardableResult
    func ip(_ side: Side, _ arguments: String...) throws -> String { try ip(side, arguments) }

    @discardableResult
    func ip(_ side: Side, _ arguments: [String]) throws -> String {
        try Self.sh(["ip"] + (namespace(side).map { ["-n", $0] } ?? []) + arguments)
    }

    /// Several `ip` commands for `side` as one `ip -batch`, each a line such as
    /// "link set v0 up".
    func batch(_ side: Side, _ commands: [String]) throws {
        try Self.sh(["ip"] + (namespace(side).map { ["-n", $0] } ?? []) + ["-batch", "-"],
                    stdin: commands.joined(separator: "\n") + "\n")
    }

    // MARK: Links, addresses, routes

    /// A second veth pair between the two sides (`inside` in the namespace,
    /// `outside` on the far side), both ends down, without addresses.
    func addVeth(inside: String, outside: String) throws {
        try Self.sh(["ip", "link", "add", inside, "netns", namespace, "type", "veth", "peer", "name", outside]
                    + (upstream.map { ["netns", $0] } ?? []))
    }

    /// `count` veth pairs made inside, set up and deleted again, in one
    /// `ip -batch`: a storm of link messages that changes nothing.
    func churn(pairs count: Int) throws {
        var up: [String] = []
        var down: [String] = []
        for i in 0..<count {
            up += ["link add veth\(i)a type veth peer name veth\(i)b", "link set veth\(i)a up", "link set veth\(i)b up"]
            down.append("link del veth\(i)a")
        }
        try batch(.inside, up + down)
    }

    /// Adds `cidr` (e.g. "10.77.0.2/24", "fd77::2/64") to `side`'s end;
    /// IPv6 without duplicate address detection, so it is usable at once.
    func address(_ side: Side, _ cidr: String) throws {
        try ip(side, ["addr", "add", cidr, "dev", interface(side)] + (cidr.contains(":") ? ["nodad"] : []))
    }

    /// Sets `side`'s end up (or down: the other end loses its carrier).
    func link(_ side: Side, up: Bool) throws {
        try ip(side, "link", "set", interface(side), up ? "up" : "down")
    }

    /// The default route inside, via `gateway` (IPv4 or IPv6).
    func defaultRoute(via gateway: String) throws {
        try ip(.inside, (gateway.contains(":") ? ["-6"] : []) + ["route", "add", "default", "via", gateway])
    }

    /// The usual lab: `insideCIDR` inside, `outsideCIDR` on the far end,
    /// both ends up and the default route via the far end's address.
    func connect(inside insideCIDR: String, outside outsideCIDR: String) throws {
        try address(.outside, outsideCIDR)
        try link(.outside, up: true)
        try address(.inside, insideCIDR)
        try link(.inside, up: true)
        try defaultRoute(via: String(outsideCIDR.split(separator: "/")[0]))
    }

    /// Name lookups inside go to `nameserver` (`ip netns exec` mounts
    /// /etc/netns/NS/resolv.conf over /etc/resolv.conf), never to a resolver
    /// outside the lab.
    func resolver(_ nameserver: String) throws {
        let folder = "/etc/netns/\(namespace)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "nameserver \(nameserver)\n".write(toFile: folder + "/resolv.conf", atomically: true, encoding: .utf8)
    }

    // MARK: nftables

    /// A table of its own on `side` with one input chain (`hook`, priority
    /// `priority`) holding `rule`; named after the lab, removed by teardown.
    /// Returns its name, for `deleteTable` or a listing.
    @discardableResult
    func filter(_ side: Side, family: String = "inet", name: String, hook: String = "input", priority: Int = 0,
                rule: [String]) throws -> String {
        try run(side, ["nft", "add", "table", family, name])
        if namespace(side) == nil { made.withLock { $0.hostTables.append((family, name)) } }
        let chain = hook == "output" ? "out" : "in"
        try run(side, ["nft", "add", "chain", family, name, chain, "{ type filter hook \(hook) priority \(priority); policy accept; }"])
        try run(side, ["nft", "add", "rule", family, name, chain] + rule)
        return name
    }

    /// One more rule in a table made by `filter`.
    func addRule(_ side: Side, family: String = "inet", table: String, hook: String = "input", rule: [String]) throws {
        try run(side, ["nft", "add", "rule", family, table, hook == "output" ? "out" : "in"] + rule)
    }

    func deleteTable(_ side: Side, family: String = "inet", _ name: String) throws {
        try run(side, ["nft", "delete", "table", family, name])
        if namespace(side) == nil { made.withLock { $0.hostTables.removeAll { $0.family == family && $0.name == name } } }
    }

    // MARK: Processes

    /// Starts `argv` on `side`; stopped by teardown (before the namespaces go).
    @discardableResult
    func spawn(_ side: Side, _ argv: [String], environment: [String: String]? = nil,
               stdout: Spawned.Output = .null, stderr: Spawned.Output = .null) throws -> Spawned {
        let p = try Spawned(self.argv(side, argv), environment: environment, stdout: stdout, stderr: stderr)
        made.withLock { $0.processes.append(p) }
        return p
    }

    /// A test HTTP server (`Resources/probe_server.py` or a script like it,
    /// which prints "ready" once it listens) on `side`, waited for.
    @discardableResult
    func startServer(_ side: Side, script: String = NetnsLab.probeServer, arguments: [String], name: String) throws -> Spawned {
        let ready = workDir.appendingPathComponent("\(name).ready").path
        let p = try spawn(side, ["python3", script] + arguments, stdout: .file(ready))
        do {
            try wait(for: "server \(name)") {
                guard p.isRunning else { throw Failure(description: "server \(name) ended before it listened") }
                return (try? String(contentsOfFile: ready, encoding: .utf8))?.contains("ready") == true
            }
        } catch {
            p.stop()
            throw error
        }
        return p
    }

    static var probeServer: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Resources/probe_server.py").standardized.path
    }

    /// Polls `condition` every 10 ms for up to `timeout`; throws naming `what` if it never holds.
    func wait(for what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return }
            usleep(10_000)
        }
        throw Failure(description: "\(what) did not come up within \(timeout)")
    }
}
