import Foundation
import LifelineTestKit
import Testing

/// A VPN told apart from the link underneath it, by the real daemon in a
/// client namespace whose default route goes into a real tunnel (userspace
/// WireGuard, OpenVPN) to a server namespace. Each fault is put in after the
/// daemon saw `online`, as it happens to a user; an nftables counter on the
/// link underneath checks that nothing but the tunnel's own datagrams leaves
/// by it during the whole test.
@Suite(.serialized) struct TunnelTests {
    func startOnline(_ vpn: VPNLab) async throws -> DaemonFixture {
        try vpn.startLeakCounter()
        try vpn.startCheckServer()
        let fixture = try startDaemon(in: vpn)
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        return fixture
    }

    /// The daemon in the lab's client namespace, probing the lab's check server.
    func startDaemon(in vpn: VPNLab) throws -> DaemonFixture {
        let fixture = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "all_proxy": ""])
        try fixture.writeConfig(ProbeTests.config(url: vpn.checkURL))
        fixture.commandPrefix = ["ip", "netns", "exec", vpn.client]
        try fixture.start()
        return fixture
    }

    /// Waits until the state file says `state` with `diagnosis`; returns its reason.
    func waitForDiagnosis(_ fixture: DaemonFixture, _ state: String, _ diagnosis: String,
                          timeout: Duration = .seconds(20)) async -> String {
        _ = await Harness.waitUntil(timeout: timeout, "\(state)/\(diagnosis) (now: \(fixture.stateJSON() ?? [:]))") {
            let s = fixture.stateJSON()
            return s?["state"] as? String == state && s?["diagnosis"] as? String == diagnosis
        }
        return fixture.stateJSON()?["reason"] as? String ?? ""
    }

    /// Nothing but the tunnel's own datagrams left by the link underneath.
    func expectNoLeak(_ vpn: VPNLab, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let leaks = try vpn.leaks()
        #expect(leaks.packets == 0, "packets left outside the tunnel:\n\(leaks.listing)", sourceLocation: sourceLocation)
    }

    func silentServerIsTunnel(_ vpn: VPNLab) async throws {
        let fixture = try await startOnline(vpn)
        let online = try fixture.statusJSON()
        #expect(online["kind"] as? String == "vpn")
        #expect(online["interface"] as? String == vpn.tunnel)
        // The link underneath is named wherever the connection is.
        #expect(online["underneath"] as? String == vpn.carrier)
        #expect(online["underneath_kind"] as? String == "ethernet")
        let line = try fixture.cli(["status"]).stdout
        #expect(line.hasPrefix("online via \(vpn.tunnel) (vpn) over \(vpn.carrier) (ethernet)"), "\(line)")
        let catalogs = try Catalogs(in: vpn.workDir.path)
        func status(_ language: String) throws -> String {
            try Harness.run([Harness.binary, "status"], environment: fixture.environment.merging(catalogs.environment(language)) { $1 }).stdout
        }
        let korean = try status("ko")
        #expect(korean.contains("\(vpn.carrier) (유선) 위의 \(vpn.tunnel)"), "\(korean)")
        try vpn.silenceVPNServer()
        let reason = await waitForDiagnosis(fixture, "limited", "tunnel")
        #expect(reason == "the VPN tunnel \(vpn.tunnel) passes no traffic; \(vpn.carrier) underneath reaches its router")
        #expect(try fixture.statusJSON()["diagnosis"] as? String == "tunnel")
        // In another language the sentence is the layer's, translated.
        let (ko, fa) = (try status("ko"), try status("fa"))
        #expect(ko.contains("VPN 터널로 아무것도 오가지 않습니다"), "\(ko)")
        #expect(fa.contains("تونل VPN هیچ ترافیکی عبور نمی‌دهد"), "\(fa)")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test(.requires(VPNLab.requirement)) func wireGuardServerSilentIsTheTunnelNotTheLinkUnderneath() async throws {
        try await silentServerIsTunnel(try VPNLab(.wireguard))
    }

    @Test(.requires(VPNLab.requirement)) func aKillSwitchOnTheLinkUnderneathChangesNothing() async throws {
        let vpn = try VPNLab(.wireguard)
        try vpn.killSwitch()
        let fixture = try await startOnline(vpn)
        // Probes keep answering (interval 2 s): three rounds later it is still online, through the tunnel.
        try await Task.sleep(for: .seconds(6))
        let s = try fixture.statusJSON()
        #expect(s["state"] as? String == "online")
        #expect(s["kind"] as? String == "vpn")
        #expect(fixture.loggedStates() == ["online"])
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test(.requires(VPNLab.requirement)) func wireGuardWithPolicyRoutingServerSilentIsTheTunnel() async throws {
        let vpn = try VPNLab(.wireguard, routing: .policy)
        let fixture = try await startOnline(vpn)
        // The main table's default stays on the link; the rules make the tunnel the connection.
        let line = try fixture.cli(["status"]).stdout
        #expect(line.hasPrefix("online via \(vpn.tunnel) (vpn) over \(vpn.carrier) (ethernet)"), "\(line)")
        try vpn.silenceVPNServer()
        let reason = await waitForDiagnosis(fixture, "limited", "tunnel")
        #expect(reason == "the VPN tunnel \(vpn.tunnel) passes no traffic; \(vpn.carrier) underneath reaches its router")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    /// `wg-quick up` and `down` while the daemon runs: only rules change (the
    /// main table's default route stays on the link), and the connection's
    /// name follows them.
    @Test(.requires(VPNLab.requirement)) func policyRulesAddedAndRemovedRenameTheConnection() async throws {
        let vpn = try VPNLab(.wireguard, routing: .policy)
        try vpn.removePolicyRules()
        try vpn.startCheckServer()
        let fixture = try startDaemon(in: vpn)
        func named() -> (interface: String?, underneath: String?) {
            let json = try? fixture.statusJSON()
            return (json?["interface"] as? String, json?["underneath"] as? String)
        }
        await Harness.waitUntil(timeout: .seconds(15), "the link named") { named().interface == vpn.carrier }
        #expect(named().underneath == nil)
        try vpn.addPolicyRules()
        #expect(await fixture.waitForState("online", timeout: .seconds(20)), "\(fixture.daemonLog)")
        await Harness.waitUntil("the tunnel named over the link") { named() == (vpn.tunnel, vpn.carrier) }
        let line = try fixture.cli(["status"]).stdout
        #expect(line.hasPrefix("online via \(vpn.tunnel) (vpn) over \(vpn.carrier) (ethernet)"), "\(line)")
        try vpn.removePolicyRules()
        await Harness.waitUntil("the link named again") { named().interface == vpn.carrier && named().underneath == nil }
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(VPNLab.requirement)) func wireGuardCarrierLosingItsRouterIsTheGatewayOfTheLinkUnderneath() async throws {
        let vpn = try VPNLab(.wireguard)
        let fixture = try await startOnline(vpn)
        try vpn.silenceRouter()
        let reason = await waitForDiagnosis(fixture, "limited", "gateway")
        #expect(reason == "\(vpn.carrier) is connected but the router \(vpn.routerAddress) does not answer")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test(.requires(VPNLab.requirement)) func wireGuardTakenDownIsTheRouteChange() async throws {
        let vpn = try VPNLab(.wireguard)
        let fixture = try await startOnline(vpn)
        try vpn.takeTunnelDown()
        _ = await Harness.waitUntil(timeout: .seconds(10), "offline") { fixture.stateJSON()?["state"] as? String == "offline" }
        let s = fixture.stateJSON() ?? [:]
        #expect(s["state"] as? String == "offline")
        // wireguard-go takes its interface down, then removes it: either is what the user reads.
        #expect(["\(vpn.tunnel) is down", "\(vpn.tunnel) was removed"].contains(s["reason"] as? String ?? ""), "\(s)")
        #expect(s["diagnosis"] as? String == "link")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test(.requires(VPNLab.openVPNRequirement)) func openVPNServerSilentIsTheTunnel() async throws {
        try await silentServerIsTunnel(try VPNLab(.openvpn))
    }

    @Test(.requires(VPNLab.openVPNRequirement)) func openVPNCarrierLosingItsRouterIsTheGatewayOfTheLinkUnderneath() async throws {
        let vpn = try VPNLab(.openvpn)
        let fixture = try await startOnline(vpn)
        try vpn.silenceRouter()
        let reason = await waitForDiagnosis(fixture, "limited", "gateway")
        #expect(reason == "\(vpn.carrier) is connected but the router \(vpn.routerAddress) does not answer")
        #expect(await fixture.stop() == 0)
    }

    /// OpenVPN's `redirect-gateway def1` while the daemon runs: no default
    /// route and no rule changes, only two /1 routes in the main table. The
    /// connection is named after the tunnel while it is up, and after the link
    /// again once it has gone.
    @Test(.requires(VPNLab.openVPNRequirement)) func openVPNDef1RoutesComingAndGoingRenameTheConnection() async throws {
        let vpn = try VPNLab(.openvpn, routing: .def1)
        try vpn.startCheckServer()
        let fixture = try startDaemon(in: vpn)
        func named() -> (interface: String?, kind: String?, underneath: String?) {
            let json = try? fixture.statusJSON()
            return (json?["interface"] as? String, json?["kind"] as? String, json?["underneath"] as? String)
        }
        await Harness.waitUntil(timeout: .seconds(15), "the link named") { named().interface == vpn.carrier }
        try vpn.bringOpenVPNUp()
        await Harness.waitUntil(timeout: .seconds(15), "the tunnel named over the link (now: \(named()))") {
            named() == (vpn.tunnel, "vpn", vpn.carrier)
        }
        #expect(await fixture.waitForState("online", timeout: .seconds(20)), "\(fixture.daemonLog)")
        let line = try fixture.cli(["status"]).stdout
        #expect(line.hasPrefix("online via \(vpn.tunnel) (vpn) over \(vpn.carrier) (ethernet)"), "\(line)")
        // Found by routes, and said so: no policy rule exists here.
        #expect(fixture.daemonLog.contains("routes send it into \(vpn.tunnel)"))
        #expect(!fixture.daemonLog.contains("policy rules send it into"))
        try vpn.takeTunnelDown()
        await Harness.waitUntil(timeout: .seconds(15), "the link named again (now: \(named()))") {
            named().interface == vpn.carrier && named().kind == "ethernet" && named().underneath == nil
        }
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(VPNLab.openVPNRequirement)) func openVPNTakenDownIsTheRouteChange() async throws {
        let vpn = try VPNLab(.openvpn)
        let fixture = try await startOnline(vpn)
        try vpn.takeTunnelDown()
        _ = await Harness.waitUntil(timeout: .seconds(10), "offline") { fixture.stateJSON()?["state"] as? String == "offline" }
        #expect(fixture.stateJSON()?["state"] as? String == "offline")
        #expect(await fixture.stop() == 0)
    }
}

/// `lifeline diagnose` through the same tunnels, without a daemon: the tunnel's
/// rows and the link underneath in place of the gateway, read without sending
/// anything outside the tunnel.
@Suite(.serialized) struct TunnelDiagnoseTests {
    func diagnose(_ vpn: VPNLab, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LC_ALL": "C.UTF-8",
                   "XDG_CONFIG_HOME": vpn.workDir.appendingPathComponent("no-config").path, "HOME": vpn.workDir.path,
                   "no_proxy": "*"]
        return try Harness.run(["ip", "netns", "exec", vpn.client, Harness.binary, "diagnose"] + arguments, environment: env)
    }

    /// The config file a user points `--config` at: the lab's check URL, a short timeout.
    func configFile(_ vpn: VPNLab, _ toml: String? = nil) throws -> String {
        let path = vpn.workDir.appendingPathComponent("diagnose.toml").path
        try (toml ?? """
            [[monitor]]
            kind = "probe"
            url = "\(vpn.checkURL)"
            timeout = "1s"
            """).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.requires(VPNLab.requirement)) func theTunnelAndTheLinkUnderneathHaveRowsOfTheirOwn() throws {
        let vpn = try VPNLab(.wireguard)
        try vpn.startLeakCounter()
        try vpn.startCheckServer()
        // An idle tunnel has shaken no hands and its router's entry is not
        // known yet: the user's traffic through it comes first.
        try vpn.inClient(["python3", "-c", "import urllib.request; urllib.request.urlopen('\(vpn.checkURL)', timeout=3).read()"])
        let r = try diagnose(vpn, ["--config", try configFile(vpn)])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(DiagnosisLab.marks(r.stdout) == ["✓ link", "✓ carrier", "✓ address", "✓ default route", "✓ VPN", "✓ link",
                                                  "✓ gateway", "✓ DNS", "✓ TCP", "✓ HTTP"], "\(r.stdout)")
        #expect(r.stdout.contains("\(vpn.tunnel) (WireGuard): last handshake"), "\(r.stdout)")
        #expect(r.stdout.contains("\(vpn.carrier) carries \(vpn.tunnel)"), "\(r.stdout)")
        #expect(r.stdout.contains("\(vpn.carrier)'s router \(vpn.routerAddress) answers"), "\(r.stdout)")

        try vpn.silenceVPNServer()
        let silent = try diagnose(vpn, ["--config", try configFile(vpn), "--json"])
        #expect(silent.status == 1)
        let json = (try JSONSerialization.jsonObject(with: Data(silent.stdout.utf8))) as? [String: Any] ?? [:]
        #expect(json["diagnosis"] as? String == "tunnel", "\(silent.stdout)")
        #expect(json["reason"] as? String == "the VPN tunnel \(vpn.tunnel) passes no traffic; \(vpn.carrier) underneath reaches its router")
        let leaks = try vpn.leaks()
        #expect(leaks.packets == 0, "packets left outside the tunnel:\n\(leaks.listing)")
    }

    @Test(.requires(VPNLab.requirement)) func aConfigFileThatDoesNotLoadIsAnErrorNamingIt() throws {
        let vpn = try VPNLab(.wireguard)
        let path = try configFile(vpn, "[[monitor]]\nkind = \"probe\"\ntimeout = \"5 parsecs\"\n")
        let r = try diagnose(vpn, ["--config", path])
        #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains(path), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }
}
