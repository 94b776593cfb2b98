import Foundation
import LifelineTestKit
import Testing

/// The probe against real HTTP servers (issue 4): a private network namespace
/// whose default route leads to the root-namespace end of a veth pair, where the
/// test runs its own check servers (`Resources/probe_server.py`). The daemon runs
/// inside the namespace; nothing leaves the machine.
@Suite(.serialized) struct ProbeTests {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3"])

    /// A short-cycle probe config; `extra` lines go into the probe's `[[monitor]]`
    /// table. The probe learns the route from the link monitor, as in the defaults.
    static func config(url: String, interval: String = "2s", timeout: String = "1s", extra: String = "") -> String {
        """
        [debounce]
        down = "200ms"
        up = "100ms"

        [[monitor]]
        kind = "netlink"

        [[monitor]]
        kind = "probe"
        url = "\(url)"
        interval = "\(interval)"
        timeout = "\(timeout)"
        \(extra)

        [[sink]]
        kind = "log"
        """
    }

    /// Starts the daemon in the lab's namespace, talking to the lab directly
    /// (the fixture's guard proxy is for default-config tests).
    func startDaemon(_ lab: ProbeLab, config: String, environment: [String: String] = [:]) throws -> DaemonFixture {
        let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: direct.merging(environment) { $1 })
        try fixture.writeConfig(config)
        fixture.commandPrefix = ["ip", "netns", "exec", lab.namespace]
        try fixture.start()
        return fixture
    }

    @Test(.requires(ProbeTests.requirement)) func healthyServerIsOnlineWithRoundTrip() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        let status = try fixture.statusJSON()
        #expect(status["state"] as? String == "online")
        #expect((status["rtt_ms"] as? Double ?? -1) > 0)
        #expect(status["interface"] as? String == lab.namespaceInterface)
        #expect((status["reason"] as? String ?? "").hasPrefix("probe answered in"))
        #expect(lab.requests(.ok).allSatisfy { $0.hasPrefix("GET /check_network_status.txt") })
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func refusedIsLimitedAndRecoveryIsOnlineWithinTwoSeconds() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // interval 1500ms: the ramp tops out at 1.5 s, so a recovery is seen within it.
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "1500ms"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))

        lab.stopServers()
        #expect(await fixture.waitForState("limited", timeout: .seconds(8)))
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "TCP connect to \(lab.hostAddress):8080 was refused", "\(reason)")
        let logged = fixture.loggedStates()
        #expect(logged == ["online", "limited"], "one published degradation, no flapping: \(logged)")

        try lab.startServer(.ok)
        let back = ContinuousClock.now
        #expect(await fixture.waitForState("online", timeout: .seconds(4)))
        let took = ContinuousClock.now - back
        #expect(took <= .seconds(2), "recovery took \(took)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func silentBlackholeIsLimitedWithinTheBound() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))

        try lab.blackhole()
        let start = ContinuousClock.now
        // timeout × failures + interval, plus the first 1 s step of the ramp
        // between the two failures and the 200 ms debounce, plus 1 s of slack.
        let bound = Duration.seconds(1 * 2 + 2) + .seconds(1) + .milliseconds(200) + .seconds(1)
        #expect(await fixture.waitForState("limited", timeout: bound + .seconds(5)))
        let took = ContinuousClock.now - start
        #expect(took <= bound, "limited after \(took), bound \(bound)")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "TCP connect to \(lab.hostAddress):8080 timed out after 1s", "\(reason)")

        try lab.heal()
        #expect(await fixture.waitForState("online", timeout: .seconds(6)))
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func redirectIsPortalNamingItsTarget() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.redirect)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL))
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "probe to \(lab.checkURL) was redirected to http://\(lab.hostAddress):8080/login (HTTP 302)")
        // Never followed: the server saw only requests for the check URL.
        #expect(!lab.requests(.redirect).isEmpty)
        #expect(lab.requests(.redirect).allSatisfy { !$0.contains("/login") })
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func wrongBodyIsPortal() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.wrongbody)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL))
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason.contains("Welcome to Hotel WiFi"), "\(reason)")
        #expect(reason.contains("expected 'NetworkManager is online'"), "\(reason)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func stallTriggerReportsLimitedWellBeforeTheInterval() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // The default interval (30s) and stall (3s): only the stall can be quick.
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "30s", timeout: "2s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        let sent = lab.packetsSentIn
        try lab.startTraffic()
        // Forty echoes answered (two seconds of the traffic's pace), however long they take to come.
        await Harness.waitUntil("traffic flowing and answered") { lab.packetsSentIn >= sent + 40 }
        #expect(fixture.loggedStates() == ["online"])

        try lab.blackhole()
        let start = ContinuousClock.now
        #expect(await fixture.waitForState("limited", timeout: .seconds(15)))
        let took = ContinuousClock.now - start
        #expect(took < .seconds(15), "limited after \(took): not well before the 30 s interval")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        // The stall's probe only confirms what the counters saw: 1.5 s, not the whole timeout.
        #expect(reason.contains("timed out after 1500ms"), "\(reason)")
        #expect(reason.contains("\(lab.namespaceInterface) sent packets but received none"), "\(reason)")

        // Packets answered again after the stall: probed at once, not after the ramp.
        try lab.heal()
        let healed = ContinuousClock.now
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        #expect(ContinuousClock.now - healed < .seconds(4), "recovery took \(ContinuousClock.now - healed)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func slowlorisServerTimesOutWithoutHanging() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.slow)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, timeout: "2s"))
        #expect(await fixture.waitForState("limited", timeout: .seconds(12)))
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "\(lab.hostAddress):8080 accepted the connection but sent no HTTP reply within 2s", "\(reason)")
        // Still probing: a good server is noticed.
        lab.stopServers()
        try lab.startServer(.ok)
        #expect(await fixture.waitForState("online", timeout: .seconds(6)))
        // And it stops promptly even with a probe under way.
        #expect(await fixture.stop(timeout: .seconds(5)) == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func hugeReplyIsCutAt64KiBAndStillJudged() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.huge)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "30s", timeout: "5s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        // The client hung up long before 10 MB (socket buffers hold a little more than 64 KiB).
        #expect(await Harness.waitUntil(timeout: .seconds(5), "server's sent count") { lab.sentCounts().count >= 1 })
        let sent = lab.sentCounts().first ?? Int.max
        #expect(sent < 10 * 1024 * 1024, "server sent \(sent) bytes")
        let rss = fixture.process.map { Self.rssKiB(pid: $0.pid) } ?? 0
        #expect(rss > 0 && rss < 80 * 1024, "daemon VmRSS \(rss) KiB")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func proxyFromTheEnvironmentIsUsed() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.proxy, port: 3128)
        // A host that does not resolve: only the proxy can answer for it.
        let url = "http://check.lifeline.invalid/check_network_status.txt"
        let fixture = try startDaemon(lab, config: Self.config(url: url),
                                      environment: ["http_proxy": "http://\(lab.hostAddress):3128", "no_proxy": ""])
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        #expect(lab.requests(.proxy).contains { $0.hasPrefix("GET \(url) ") })
        #expect(await fixture.stop() == 0)

        // no_proxy names the host: straight to DNS, which fails → limited, named.
        let direct = try startDaemon(lab, config: Self.config(url: url),
                                     environment: ["http_proxy": "http://\(lab.hostAddress):3128", "no_proxy": "lifeline.invalid"])
        #expect(await direct.waitForState("limited", timeout: .seconds(10)))
        // The kernel rate-limits the "port unreachable" that makes a lookup fail
        // fast, so one probe may time out instead; the DNS failure is named soon.
        await Harness.waitUntil(timeout: .seconds(10), "the reason names the failed lookup") {
            ((try? direct.statusJSON()["reason"] as? String) ?? "").contains("resolve")
        }
        #expect(await direct.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func noDefaultRouteMeansNoProbeTrafficAndARouteBackProbesAtOnce() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "1s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))

        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "del", "default"])
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        try await Task.sleep(for: .milliseconds(1500))  // a probe under way may finish
        let before = lab.requests(.ok).count
        try await Task.sleep(for: .seconds(4))  // four intervals
        #expect(lab.requests(.ok).count == before, "probed without a default route")
        #expect(fixture.loggedStates() == ["online", "offline"], "published something new without a route")

        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "add", "default", "via", lab.hostAddress])
        #expect(await Harness.waitUntil("a probe once the route is back") {
            lab.requests(.ok).count > before
        })
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func withNetlinkARouteChangeProbesAtOnce() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        // The default monitors, netlink then probe, with the default 30 s interval.
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "30s", timeout: "5s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        #expect((try fixture.statusJSON()["reason"] as? String ?? "").hasPrefix("probe answered"))

        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "del", "default"])
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        let before = lab.requests(.ok).count
        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "add", "default", "via", lab.hostAddress])
        // The route change is checked with a probe at once: both come well before the 30 s interval.
        #expect(await fixture.waitForState("online", timeout: .seconds(20)))
        #expect(await Harness.waitUntil(timeout: .seconds(20), "a probe after the route change") {
            lab.requests(.ok).count > before
        })
        #expect(await fixture.stop() == 0)
    }

    /// The route comes back but its uplink is dead (an ISP outage, a router
    /// rebooting): the probe's `online` from before the outage must not be
    /// reused. What is published after `offline` is the truth on the new path.
    @Test(.requires(ProbeTests.requirement)) func aRouteBackOverADeadUplinkIsLimitedNeverAFalseRecovery() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let fixture = try startDaemon(lab, config: Self.config(url: lab.checkURL, interval: "30s", timeout: "1s"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "del", "default"])
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        try lab.blackhole()
        defer { try? lab.heal() }
        try ProbeLab.sh(["ip", "-n", lab.namespace, "route", "add", "default", "via", lab.hostAddress])
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        #expect(fixture.loggedStates() == ["online", "offline", "limited"])
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "TCP connect to \(lab.hostAddress):8080 timed out after 1s", "\(reason)")

        // The uplink heals: a real recovery, from a fresh probe.
        try lab.heal()
        #expect(await fixture.waitForState("online", timeout: .seconds(6)))
        #expect((try fixture.statusJSON()["reason"] as? String ?? "").hasPrefix("probe answered"))
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(ProbeTests.requirement)) func interfaceBindingIsHonoured() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let bound = try startDaemon(lab, config: Self.config(url: lab.checkURL, extra: "interface = \"\(lab.namespaceInterface)\"\nfamily = \"ipv4\""))
        #expect(await bound.waitForState("online", timeout: .seconds(10)))
        #expect(await bound.stop() == 0)

        // Bound to loopback, the lab's server is out of reach.
        let wrong = try startDaemon(lab, config: Self.config(url: lab.checkURL, extra: "interface = \"lo\""))
        #expect(await wrong.waitForState("limited", timeout: .seconds(10)))
        let reason = try wrong.statusJSON()["reason"] as? String ?? ""
        #expect(reason.contains("\(lab.hostAddress):8080"), "\(reason)")
        #expect(await wrong.stop() == 0)
    }

    static func rssKiB(pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}

extension DaemonFixture {
    /// The runtime state file, parsed (what `lifeline status --json` prints).
    /// What a user running `lifeline status --json` sees.
    func statusJSON() throws -> [String: Any] {
        let out = try cli(["status", "--json"])
        return (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8))) as? [String: Any] ?? [:]
    }

    func waitForState(_ state: String, timeout: Duration, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await Harness.waitUntil(timeout: timeout, "state \(state) (log: \(loggedStates()))", sourceLocation: sourceLocation) {
            stateJSON()?["state"] as? String == state && filesAgree()
        }
    }
}

/// A network namespace behind a veth pair, with check servers on the root side
/// (the host end, `hostAddress`), where the namespace's default route and
/// resolver lead.
final class ProbeLab: @unchecked Sendable {
    enum Mode: String { case ok, redirect, wrongbody, slow, huge, proxy, late, unavailable }

    let net: NetnsLab
    let hostAddress: String
    let namespaceAddress: String
    /// The nftables table the faults use, on the host end.
    let table: String
    private var servers: [Spawned] = []
    private var traffic: Spawned?

    var namespace: String { net.namespace }
    var hostInterface: String { net.upstreamInterface }
    var namespaceInterface: String { net.interface }
    var workDir: URL { net.workDir }

    static var script: String { NetnsLab.probeServer }

    var checkURL: String { "http://\(hostAddress):8080/check_network_status.txt" }

    init() throws {
        let tag = NetnsLab.uniqueTag()
        net = try NetnsLab(prefix: "llprobe", interfaces: (inside: "lpb\(tag)", outside: "lpa\(tag)"), tag: tag)
        let subnet = Self.freeSubnet()
        hostAddress = "10.214.\(subnet).1"
        namespaceAddress = "10.214.\(subnet).2"
        table = "llprobe_\(tag)"
        // Name lookups in the namespace go to the lab's host end (nothing
        // listens: a quick failure), never to a resolver outside.
        try net.resolver(hostAddress)
        try net.connect(inside: "\(namespaceAddress)/24", outside: "\(hostAddress)/24")
    }

    /// A 10.214.N.0/24 no interface of this machine has yet: the host ends of
    /// labs running at the same time must not share a subnet.
    static func freeSubnet() -> Int {
        let used = (try? Harness.run(["ip", "-4", "-o", "addr", "show"]).stdout) ?? ""
        let free = (1...250).filter { !used.contains(" 10.214.\($0).") }
        return free.randomElement() ?? Int.random(in: 1...250)
    }

    deinit {
        stopServers()
        traffic?.stop()
    }

    @discardableResult
    static func sh(_ argv: [String]) throws -> String { try NetnsLab.sh(argv) }

    typealias LabError = NetnsLab.Failure

    func logPath(_ mode: Mode) -> String { workDir.appendingPathComponent("\(mode.rawValue).log").path }

    /// Starts a check server on the root side and waits until it listens.
    func startServer(_ mode: Mode, port: Int = 8080) throws {
        servers.append(try net.startServer(.outside, arguments: [mode.rawValue, hostAddress, "\(port)", logPath(mode)],
                                           name: "\(mode.rawValue)-\(servers.count)"))
    }

    func stopServers() {
        for p in servers { p.stop() }
        servers.removeAll()
    }

    /// The upstream stops answering; the link and routes stay as they are.
    func blackhole() throws {
        try net.filter(.outside, name: table, rule: ["iifname", hostInterface, "drop"])
    }

    func heal() throws {
        try net.deleteTable(.outside, table)
    }

    /// A lossy but working upstream: `percent` of the packets from the
    /// namespace are dropped at random, counted.
    func lossy(percent: Int) throws {
        try net.filter(.outside, name: table, rule: ["iifname", hostInterface,
                                                     "numgen", "random", "mod", "100", "<", "\(percent)", "counter", "drop"])
    }

    /// Packets the lossy rule dropped so far.
    func droppedPackets() -> Int {
        let listing = (try? Self.sh(["nft", "list", "table", "inet", table])) ?? ""
        guard let range = listing.range(of: "counter packets ") else { return 0 }
        return Int(listing[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// A steady UDP stream from the namespace (20 packets/s) to an echo server on
    /// the host end, as an active user would cause: answered packet for packet
    /// while the upstream works, unanswered once it is blackholed.
    func startTraffic() throws {
        let python = Harness.which("python3") ?? "/usr/bin/python3"
        let echo = try net.spawn(.outside, [python, "-c", """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("\(hostAddress)", 7))
            while True:
                data, peer = s.recvfrom(2048)
                s.sendto(data, peer)
            """])
        servers.append(echo)
        traffic = try net.spawn(.inside, [python, "-c", """
            import socket, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            while True:
                try:
                    s.sendto(b"x" * 32, ("\(hostAddress)", 7))
                except OSError:
                    pass
                time.sleep(0.05)
            """])
    }

    /// Packets the host end has sent into the namespace, the echoes among them.
    var packetsSentIn: Int {
        let counter = "/sys/class/net/\(hostInterface)/statistics/tx_packets"
        return Int(((try? String(contentsOfFile: counter, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    func requests(_ mode: Mode) -> [String] {
        ((try? String(contentsOfFile: logPath(mode), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("sent ") }
    }

    func sentCounts() -> [Int] {
        ((try? String(contentsOfFile: logPath(.huge), encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { $0.hasPrefix("sent ") }.compactMap { Int($0.dropFirst(5)) }
    }
}
