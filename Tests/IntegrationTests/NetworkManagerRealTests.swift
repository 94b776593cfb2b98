import Foundation
import LifelineTestKit
import Testing

/// The real daemon (netlink, probe and networkmanager monitors) beside a real
/// NetworkManager in its own namespaces (`NetworkManagerLab`). Runs where
/// NetworkManager is installed; it is never the machine's own that is used.
@Suite(.serialized) struct NetworkManagerRealTests {
    static let config = """
        [debounce]
        down = "1s"
        up = "500ms"

        [[monitor]]
        kind = "netlink"

        [[monitor]]
        kind = "probe"
        url = "\(NetworkManagerLab.checkURL)"
        interval = "2s"
        timeout = "1s"

        [[monitor]]
        kind = "networkmanager"

        [[sink]]
        kind = "log"
        """

    func startDaemon(_ lab: NetworkManagerLab) throws -> DaemonFixture {
        let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: direct.merging(lab.environment) { $1 })
        try fixture.writeConfig(Self.config)
        fixture.commandPrefix = ["ip", "netns", "exec", lab.namespace]
        try fixture.start()
        return fixture
    }

    func field(_ fixture: DaemonFixture, _ name: String) -> Any? { fixture.stateJSON()?[name] }

    @Test(.requires(NetworkManagerLab.requirement)) func followsARealNetworkManagerThroughOutagesMeteredAndARestart() async throws {
        let lab = try NetworkManagerLab()
        try lab.startNetworkManager()
        let fixture = try startDaemon(lab)

        // Connected, full connectivity: online over NetworkManager's wired connection.
        await Harness.waitUntil(timeout: .seconds(30), "NetworkManager connected:full (\(lab.log.suffix(2000)))") {
            lab.generalState == "connected:full"
        }
        await Harness.waitUntil(timeout: .seconds(10), "online via Lab wired (\(String(describing: fixture.stateJSON())))") {
            field(fixture, "state") as? String == "online" && field(fixture, "connection") as? String == "Lab wired"
        }
        #expect(field(fixture, "kind") as? String == "ethernet")
        #expect(field(fixture, "interface") as? String == lab.interface)
        #expect(field(fixture, "metered") as? Bool == false)

        // Metered: an attribute, never a transition.
        let transitions = fixture.loggedEvents().count
        try lab.nmcli("connection", "modify", "Lab wired", "connection.metered", "yes")
        try lab.nmcli("device", "reapply", lab.interface)
        await Harness.waitUntil(timeout: .seconds(10), "metered") { field(fixture, "metered") as? Bool == true }
        #expect(fixture.loggedEvents().count == transitions)
        #expect(field(fixture, "state") as? String == "online")

        // The check server stops answering: Lifeline's probe says so long before NetworkManager.
        try lab.blockCheckServer()
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        let reason = field(fixture, "reason") as? String ?? ""
        // The probe's own words (the layer it failed at), not NetworkManager's.
        let checkServer = URL(string: NetworkManagerLab.checkURL).map { "\($0.host ?? ""):\($0.port ?? 80)" } ?? "?"
        #expect(reason.hasPrefix("TCP connect to \(checkServer)"), "\(reason)")
        #expect(field(fixture, "diagnosis") as? String == "tcp")
        #expect(lab.generalState.hasSuffix(":full"), "NetworkManager had already noticed: \(lab.generalState)")
        try lab.unblockCheckServer()
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))

        // Carrier lost: offline at once (the kernel), whatever NetworkManager still says.
        let activeBefore = try lab.nmcli("-t", "-f", "ACTIVE-PATH", "connection", "show", "--active")
        try lab.carrier(false)
        #expect(await fixture.waitForState("offline", timeout: .seconds(5)))
        let offlineAt = fixture.loggedEvents().count
        // NetworkManager agrees seconds later and drops its connection: no second transition.
        await Harness.waitUntil(timeout: .seconds(20), "NetworkManager disconnected (\(lab.generalState))") {
            lab.generalState.hasPrefix("disconnected")
        }
        #expect(fixture.loggedEvents().count == offlineAt, "\(fixture.loggedStates())")
        #expect(field(fixture, "state") as? String == "offline")
        try lab.carrier(true)
        await Harness.waitUntil(timeout: .seconds(30), "online again via Lab wired") {
            field(fixture, "state") as? String == "online" && field(fixture, "connection") as? String == "Lab wired"
        }
        let activeAfter = try lab.nmcli("-t", "-f", "ACTIVE-PATH", "connection", "show", "--active")
        #expect(activeBefore != activeAfter, "a new primary connection: \(activeBefore) → \(activeAfter)")
        #expect(field(fixture, "kind") as? String == "ethernet")

        // NetworkManager stops: the state stands on netlink and the probe, without its name.
        try lab.stopNetworkManager()
        await Harness.waitUntil(timeout: .seconds(10), "NetworkManager's name withdrawn") {
            field(fixture, "connection") as? String == ""
        }
        #expect(field(fixture, "state") as? String == "online")
        #expect(fixture.process?.isRunning == true)
        try lab.startNetworkManager()
        await Harness.waitUntil(timeout: .seconds(30), "NetworkManager followed again") {
            field(fixture, "connection") as? String == "Lab wired"
        }
        #expect(field(fixture, "state") as? String == "online")

        #expect(await fixture.stop() == 0)
        let complaints = fixture.daemonLog.split(separator: "\n").filter {
            $0.contains("networkmanager") && ($0.contains("error") || $0.contains("warning"))
        }
        #expect(complaints.isEmpty, "\(complaints)")
    }
}
