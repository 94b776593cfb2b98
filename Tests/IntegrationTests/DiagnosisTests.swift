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
            return s?["state"] as? String == state && s?["diagnosis"] as? String == diagnosis
        }
        return fixture.stateJSON()?["reason"] as? String ?? ""
    }

    @Test func routerSilentOnARPIsGatewayNotAnswering() async throws {
        guard Harness.available(DiagnosisLab.requirement) else { return }
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

    @Test func dnsSilentWhileTCPWorksIsDNSNotAnswering() async throws {
        guard Harness.available(DiagnosisLab.requirement) else { return }
        let d = try DiagnosisLab()
        try d.startDNS()
        let fixture = try await startOnline(d, url: d.checkURLByName)
        try d.silenceDNS()
        // A silent resolver holds each probe for glibc's own timeout (5 s, two
        // tries) whatever the probe's timeout, so two failures take about 20 s.
        let reason = await waitForDiagnosis(fixture, "limited", "dns", timeout: .seconds(40))
        #expect(reason == "The router answers but DNS (\(d.lab.hostAddress)) does not")
        // Only DNS is broken: the check server still takes connections by address.
        #expect(d.tcpConnects(to: d.lab.hostAddress, port: 8080))
        #expect(!d.resolvesInNamespace())
        #expect(await fixture.stop() == 0)
    }

    @Test func droppedCheckPortIsTCPConnectTimedOut() async throws {
        guard Harness.available(DiagnosisLab.requirement) else { return }
        let d = try DiagnosisLab()
        let fixture = try await startOnline(d, url: d.lab.checkURL)
        try d.dropCheckPort()
        let reason = await waitForDiagnosis(fixture, "limited", "tcp")
        #expect(reason == "TCP connect to \(d.lab.hostAddress):8080 timed out after 1s")
        let logged = fixture.loggedEvents().last
        #expect(logged?["diagnosis"] as? String == "tcp")
        #expect(await fixture.stop() == 0)
    }

    @Test func recoveryClearsTheDiagnosis() async throws {
        guard Harness.available(DiagnosisLab.requirement) else { return }
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
