import Foundation
import LifelineTestKit
import Testing

/// Which layer failed, told by the real daemon in a network namespace: the
/// router silent on ARP, DNS silent while TCP works, the check port dropped.
/// Each fault is put in after the daemon saw `online`, as it happens to a user.
@Suite(.serialized) struct DiagnosisTests {
    func startOnline(_ d: DiagnosisLab, url: String) async throws -> DaemonFixture {
        try d.lab.startServer(.ok)
        let fixture = try ProbeTests().startDaemon(d.lab, config: ProbeTests.config(url: url))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        return fixture
    }

    /// Waits until the state file says `state` with `diagnosis`; returns its reason.
    func waitForDiagnosis(_ fixture: DaemonFixture, _ state: String, _ diagnosis: String,
                          timeout: Duration = .seconds(15)) async -> String {
        _ = await Harness.waitUntil(timeout: timeout, "\(state)/\(diagnosis) (now: \(fixture.stateJSON() ?? [:]))") {
            let s = fixture.stateJSON()
            return s?["state"] as? String == state && s?["diagnosis"] as? String == diagnosis && fixture.filesAgree()
        }
        return fixture.stateJSON()?["reason"] as? String ?? ""
    }

    @Test(.requires(DiagnosisLab.requirement)) func routerSilentOnARPIsGatewayNotAnswering() async throws {
        let d = try DiagnosisLab()
        let fixture = try await startOnline(d, url: d.lab.checkURL)
        try d.silenceRouter()
        let reason = await waitForDiagnosis(fixture, "limited", "gateway")
        #expect(reason == "\(d.lab.namespaceInterface) is connected but the router \(d.lab.hostAddress) does not answer")
        // What the user runs sees the same.
        let status = try fixture.statusJSON()
        #expect(status["diagnosis"] as? String == "gateway")
        #expect(try fixture.cli(["status"]).stdout.contains("does not answer"))
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(DiagnosisLab.requirement)) func dnsSilentWhileTCPWorksIsDNSNotAnswering() async throws {
        let d = try DiagnosisLab()
        try d.startDNS()
        let fixture = try await startOnline(d, url: d.checkURLByName)
        try d.silenceDNS()
        let start = ContinuousClock.now
        let reason = await waitForDiagnosis(fixture, "limited", "dns", timeout: .seconds(40))
        #expect(reason == "The router answers but DNS (\(d.lab.hostAddress)) does not")
        // The probe's timeout holds for DNS too, though glibc keeps asking a
        // silent resolver for 10 s: timeout × failures, the interval, the first
        // ramp step, the debounce, and a second of slack.
        let bound = Duration.seconds(1 * 2 + 2 + 1) + .milliseconds(200) + .seconds(1)
        #expect(ContinuousClock.now - start <= bound, "limited after \(ContinuousClock.now - start), bound \(bound)")
        // Only DNS is broken: the check server still takes connections by address.
        #expect(d.tcpConnects(to: d.lab.hostAddress, port: 8080))
        #expect(!d.resolvesInNamespace())
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(DiagnosisLab.requirement)) func droppedCheckPortIsTCPConnectTimedOut() async throws {
        let d = try DiagnosisLab()
        let fixture = try await startOnline(d, url: d.lab.checkURL)
        try d.dropCheckPort()
        let reason = await waitForDiagnosis(fixture, "limited", "tcp")
        #expect(reason == "TCP connect to \(d.lab.hostAddress):8080 timed out after 1s")
        let logged = fixture.loggedEvents().last
        #expect(logged?["diagnosis"] as? String == "tcp")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(DiagnosisLab.requirement)) func recoveryClearsTheDiagnosis() async throws {
        let d = try DiagnosisLab()
        let fixture = try await startOnline(d, url: d.lab.checkURL)
        #expect(fixture.stateJSON()?["diagnosis"] as? String == "")
        d.lab.stopServers()
        let reason = await waitForDiagnosis(fixture, "limited", "tcp")
        #expect(reason == "TCP connect to \(d.lab.hostAddress):8080 was refused")
        try d.lab.startServer(.ok)
        _ = await waitForDiagnosis(fixture, "online", "")
        #expect(fixture.stateJSON()?["diagnosis"] as? String == "")
        #expect(await fixture.stop() == 0)
    }
}

/// `lifeline diagnose` in the same namespaces, without a daemon: each layer in
/// order with its mark, stopping at the first that fails.
@Suite(.serialized) struct DiagnoseCommandTests {
    static let layers = ["link", "carrier", "address", "default route", "gateway", "DNS", "TCP", "HTTP"]

    /// ✓ up to `failed`, ✗ there, – after it (all ✓ when nil).
    func expected(failingAt failed: String?) -> [String] {
        let stop = failed.flatMap { Self.layers.firstIndex(of: $0) } ?? Self.layers.count
        return Self.layers.enumerated().map { i, layer in (i < stop ? "✓" : i == stop ? "✗" : "–") + " " + layer }
    }

    @Test(.requires(DiagnosisLab.requirement)) func healthyPathIsAllTicksAndExitZero() throws {
        let d = try DiagnosisLab()
        try d.startDNS()
        try d.lab.startServer(.ok)
        let r = try d.diagnose(url: d.checkURLByName)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.hasPrefix("IPv4\n"), "\(r.stdout)")
        #expect(DiagnosisLab.marks(r.stdout) == expected(failingAt: nil), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("online: every layer answers\n"), "\(r.stdout)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func theConfiguredExpectationJudgesTheReply() throws {
        let d = try DiagnosisLab()
        try d.lab.startServer(.ok)
        let r = try d.diagnose(url: d.lab.checkURL, config: """
            [[monitor]]
            kind = "probe"
            expect_body_prefix = "Lifeline check ok"
            """)
        #expect(r.status == 1)
        #expect(DiagnosisLab.marks(r.stdout) == expected(failingAt: "HTTP"), "\(r.stdout)")
        #expect(r.stdout.contains("expected 'Lifeline check ok'"), "\(r.stdout)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func silentRouterFailsAtTheGateway() throws {
        let d = try DiagnosisLab()
        try d.lab.startServer(.ok)
        try d.silenceRouter()
        let r = try d.diagnose(url: d.lab.checkURL)
        #expect(r.status == 1)
        #expect(DiagnosisLab.marks(r.stdout) == expected(failingAt: "gateway"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("limited: \(d.lab.namespaceInterface) is connected but the router \(d.lab.hostAddress) does not answer\n"), "\(r.stdout)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func silentResolverFailsAtDNS() throws {
        let d = try DiagnosisLab()
        try d.startDNS()
        try d.lab.startServer(.ok)
        try d.silenceDNS()
        let start = ContinuousClock.now
        let r = try d.diagnose(url: d.checkURLByName, json: true)
        // --timeout 1s holds for the lookup too (glibc alone would wait 10 s).
        #expect(ContinuousClock.now - start < .seconds(5), "diagnose took \(ContinuousClock.now - start)")
        #expect(r.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["state"] as? String == "limited")
        #expect(object?["diagnosis"] as? String == "dns")
        #expect(object?["families"] as? [String: String] == ["ipv4": "limited"])
        let checks = object?["checks"] as? [[String: Any]] ?? []
        #expect(checks.map { "\($0["result"] ?? "") \($0["layer"] ?? "")" }
            == ["ok link", "ok carrier", "ok address", "ok route", "ok gateway", "fail dns", "skipped tcp", "skipped http"], "\(r.stdout)")
        #expect(object?["reason"] as? String == "The router answers but DNS (\(d.lab.hostAddress)) does not")
    }

    @Test(.requires(DiagnosisLab.requirement)) func droppedPortFailsAtTCP() throws {
        let d = try DiagnosisLab()
        try d.lab.startServer(.ok)
        try d.dropCheckPort()
        let r = try d.diagnose(url: d.lab.checkURL)
        #expect(r.status == 1)
        #expect(DiagnosisLab.marks(r.stdout) == expected(failingAt: "TCP"), "\(r.stdout)")
        #expect(r.stdout.contains("TCP connect to \(d.lab.hostAddress):8080 timed out after 1s"), "\(r.stdout)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func withoutADefaultRouteTheRouteLayerFails() throws {
        let d = try DiagnosisLab()
        try ProbeLab.sh(["ip", "-n", d.lab.namespace, "route", "del", "default"])
        let r = try d.diagnose(url: d.lab.checkURL)
        #expect(r.status == 1)
        #expect(DiagnosisLab.marks(r.stdout) == expected(failingAt: "default route"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("offline: no default route\n"), "\(r.stdout)")
    }
}

/// IPv4 and IPv6 probed apart by the real daemon.
@Suite(.serialized) struct FamilyVerdictTests {
    /// Runs the daemon with the check host by name after `breakIPv6`, IPv4
    /// fine: it must say online with `families.ipv6 = limited`, and never
    /// alert (the only published transition is the start-up online). Returns
    /// the reason the user reads.
    static func reasonWithIPv6Limited(_ d: DiagnosisLab, breakIPv6: () throws -> Void) async throws -> String {
        try breakIPv6()
        try d.startDNS(ipv6: true)
        try d.lab.startServer(.ok)
        let fixture = try ProbeTests().startDaemon(d.lab, config: ProbeTests.config(url: d.checkURLByName))
        let marked = await Harness.waitUntil(timeout: .seconds(20), "families.ipv6 limited (now: \(fixture.stateJSON() ?? [:]))") {
            (fixture.stateJSON()?["families"] as? [String: String]) == ["ipv4": "online", "ipv6": "limited"] && fixture.filesAgree()
        }
        #expect(marked)
        let status = try fixture.statusJSON()
        #expect(status["state"] as? String == "online")
        #expect(status["diagnosis"] as? String == "")
        #expect(fixture.loggedStates() == ["online"])
        #expect(await fixture.stop() == 0)
        return status["reason"] as? String ?? ""
    }

    @Test(.requires(DiagnosisLab.requirement)) func ipv6BlackholedIPv4FineIsOnlineWithIPv6LimitedAndNoAlert() async throws {
        let d = try DiagnosisLab()
        let reason = try await Self.reasonWithIPv6Limited(d) { try d.enableIPv6(blackholed: true) }
        #expect(reason.hasPrefix("IPv6 broken: TCP connect to \(DiagnosisLab.checkHost):8080 timed out after 1s; probe answered in "), "\(reason)")
    }
}

/// IPv6 through a link-local router that stops answering neighbour discovery,
/// IPv4 fine: the daemon stays online and names the silent IPv6 router, and
/// `diagnose` fails the IPv6 gateway row.
@Suite(.serialized) struct SilentIPv6RouterTests {
    @Test(.requires(DiagnosisLab.requirement)) func daemonNamesTheSilentIPv6RouterAndStaysOnline() async throws {
        let d = try DiagnosisLab()
        let reason = try await FamilyVerdictTests.reasonWithIPv6Limited(d) { try d.enableIPv6ViaLinkLocalRouter(silentRouter: true) }
        let router = "IPv6 broken: \(d.lab.namespaceInterface) is connected but the router \(DiagnosisLab.routerLinkLocal) does not answer; probe answered in "
        #expect(reason.hasPrefix(router), "\(reason)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func diagnoseFailsTheIPv6GatewayRow() throws {
        let d = try DiagnosisLab()
        try d.enableIPv6ViaLinkLocalRouter(silentRouter: true)
        try d.startDNS(ipv6: true)
        try d.lab.startServer(.ok)
        let r = try d.diagnose(url: d.checkURLByName)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let ipv6 = DiagnosisLab.block(r.stdout, "IPv6")
        #expect(DiagnosisLab.marks(ipv6) == DiagnoseCommandTests().expected(failingAt: "gateway"), "\(r.stdout)")
        #expect(ipv6.contains("default via \(DiagnosisLab.routerLinkLocal) dev \(d.lab.namespaceInterface)"), "\(r.stdout)")
        let silent = "\(d.lab.namespaceInterface) is connected but the router \(DiagnosisLab.routerLinkLocal) does not answer"
        #expect(ipv6.contains(silent), "\(r.stdout)")
        #expect(DiagnosisLab.marks(DiagnosisLab.block(r.stdout, "IPv4")) == DiagnoseCommandTests().expected(failingAt: nil), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("online: IPv6 broken: \(silent)\n"), "\(r.stdout)")
    }

    @Test(.requires(DiagnosisLab.requirement)) func diagnoseTicksAnIPv6RouterThatAnswers() throws {
        let d = try DiagnosisLab()
        try d.enableIPv6ViaLinkLocalRouter(silentRouter: false)
        try d.lab.startServer(.ok)
        let r = try d.diagnose(url: d.lab.checkURL.replacingOccurrences(of: d.lab.hostAddress, with: "[\(d.hostAddress6)]"))
        let ipv6 = DiagnosisLab.block(r.stdout, "IPv6")
        #expect(ipv6.contains("\(DiagnosisLab.routerLinkLocal) answers neighbour discovery"), "\(r.stdout)")
        #expect(Array(DiagnosisLab.marks(ipv6).prefix(5)) == Array(DiagnoseCommandTests().expected(failingAt: nil).prefix(5)), "\(r.stdout)")
    }
}

/// The link layers as the netlink monitor names them, in a private namespace pair.
@Suite(.serialized) struct LinkLayerDiagnosisTests {
    func waitForStateFile(_ d: DaemonFixture, _ state: String, _ diagnosis: String, _ reason: String) async {
        let ok = await Harness.waitUntil(timeout: .seconds(10), "\(state)/\(diagnosis) (now: \(d.stateJSON() ?? [:]))") {
            let s = d.stateJSON()
            return s?["state"] as? String == state && s?["diagnosis"] as? String == diagnosis && d.filesAgree()
        }
        if ok { #expect(d.stateJSON()?["reason"] as? String == reason) }
    }

    @Test(.requires(.rootAnd(["ip"]))) func carrierLinkAndRouteAreToldApartAndFollowedWhileOffline() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await waitForStateFile(d, "online", "", "default route via v0")
        // The far end goes down: v0 keeps its route but loses the carrier.
        try net.upstream("link set v1 down")
        await waitForStateFile(d, "offline", "carrier", "carrier lost on v0")
        try net.upstream("link set v1 up")
        await waitForStateFile(d, "online", "", "default route via v0")
        try net.client("link set v0 down")
        await waitForStateFile(d, "offline", "link", "v0 is down")
        // Up again, the kernel does not restore the IPv4 route: still offline,
        // but now for want of a route, and the state says so.
        try net.client("link set v0 up")
        await waitForStateFile(d, "offline", "route", "no default route")
        #expect(d.loggedStates() == ["online", "offline", "online", "offline"])
        #expect(await d.stop() == 0)
    }
}
