import Foundation
import LifelineTestKit
import Testing

/// NetworkManager asks one URI; the probe asks several. While the probe runs,
/// NetworkManager's verdict makes it measure at once, and the probe's answer
/// decides: the real daemon (netlink, probe with two check servers,
/// networkmanager) in a lab namespace, python-dbusmock's NetworkManager on a
/// private system bus with the stock policy, the route left alone.
@Suite(.serialized) struct ConsensusFirstTests {
    static let requirement = Harness.Requirement.all(
        EndpointsTests.requirement, StockSystemBus.requirement, NetworkManagerMock.requirement, .tools(["dbus-monitor"]))

    /// NetworkManager says LIMITED, then PORTAL, right after a probe round,
    /// while both check servers answer: nothing but `online` is published, in
    /// the event log or on D-Bus. Then a real outage while NetworkManager says
    /// FULL: `limited` within the bound the probe alone has.
    @Test(.requires(ConsensusFirstTests.requirement)) func networkManagersFalseAlarmsPublishNothingAndARealOutageStillShows() async throws {
        let bus = try StockSystemBus.start()
        let nm = NetworkManagerMock(bus: bus)
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let session = try PrivateBus()
        let lab = try ProbeLab()
        let first = try lab.addHostAddress(last: 3), second = try lab.addHostAddress(last: 4)
        let servers = [try lab.startServer(.ok, host: first, tag: "first"), try lab.startServer(.ok, host: second, tag: "second")]
        defer { servers.forEach { $0.stop() } }
        let urls = ["http://\(first):8080/check_network_status.txt", "http://\(second):8080/check_network_status.txt"]
        // Rounds 4 s apart and a 1 s window: a verdict published between two rounds shows.
        let config = EndpointsTests.config(urls: urls, interval: "4s")
            .replacingOccurrences(of: "down = \"200ms\"", with: "down = \"1s\"")
            + "\n\n[[monitor]]\nkind = \"networkmanager\"\n\n[[sink]]\nkind = \"dbus\"\n"
        let signals = try Spawned(["dbus-monitor", "--address", session.address,
                                   "type='signal',interface='org.lifeline.Lifeline1',member='StateChanged'"],
                                  stdout: .capture, stderr: .capture)
        defer { signals.kill() }
        let fixture = try ProbeTests().startDaemon(lab, config: config,
                                                   environment: nm.environment.merging(session.environment) { $1 })
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")

        for connectivity in ["3", "2"] {
            // Right after a round, so the next scheduled one is 4 s away.
            let asked = lab.requests(tag: "first").count
            #expect(await Harness.waitUntil(timeout: .seconds(8), "a probe round") { lab.requests(tag: "first").count > asked })
            let before = lab.requests(tag: "first").count
            try nm.set("connectivity", connectivity)
            // The probe is asked at once, well before its next round.
            #expect(await Harness.waitUntil(timeout: .seconds(2), "the probe asked again") { lab.requests(tag: "first").count > before })
            #expect(try await EndpointsTests.staysOnline(fixture, for: .seconds(2)), "NetworkManager \(connectivity): \(fixture.loggedStates())")
        }
        let published = String(decoding: signals.capturedStdout, as: UTF8.self)
        #expect(published.contains("\"online\""), "\(published)")
        #expect(!published.contains("\"limited\"") && !published.contains("\"portal\""), "\(published)")

        // A real outage while NetworkManager says FULL: the probe's word decides.
        try nm.set("connectivity", "4")
        try lab.blackhole()
        let start = ContinuousClock.now
        // The probe's own bound with two servers (as in EndpointsTests), for a 4 s interval and 1 s window.
        let bound = Duration.seconds(1 * 2 + 4) + .seconds(1) + .seconds(1) + .seconds(1) + .seconds(2)
        #expect(await fixture.waitForState("limited", timeout: bound + .seconds(5)))
        #expect(ContinuousClock.now - start <= bound, "limited after \(ContinuousClock.now - start), bound \(bound)")
        #expect((try fixture.statusJSON()["reason"] as? String ?? "").contains("\(first):8080"))
        #expect(String(decoding: signals.capturedStdout, as: UTF8.self).contains("\"limited\""))
        #expect(await fixture.stop() == 0)
    }
}
