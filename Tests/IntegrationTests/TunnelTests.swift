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
        let fixture = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "all_proxy": ""])
        try fixture.writeConfig(ProbeTests.config(url: vpn.checkURL))
        fixture.commandPrefix = ["ip", "netns", "exec", vpn.client]
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
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
        try vpn.silenceVPNServer()
        let reason = await waitForDiagnosis(fixture, "limited", "tunnel")
        #expect(reason == "the VPN tunnel \(vpn.tunnel) passes no traffic; \(vpn.carrier) underneath reaches its router")
        #expect(try fixture.statusJSON()["diagnosis"] as? String == "tunnel")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test func wireGuardServerSilentIsTheTunnelNotTheLinkUnderneath() async throws {
        guard Harness.available(VPNLab.requirement) else { return }
        try await silentServerIsTunnel(try VPNLab(.wireguard))
    }

    @Test func aKillSwitchOnTheLinkUnderneathChangesNothing() async throws {
        guard Harness.available(VPNLab.requirement) else { return }
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

    @Test func wireGuardWithPolicyRoutingServerSilentIsTheTunnel() async throws {
        guard Harness.available(VPNLab.requirement) else { return }
        let vpn = try VPNLab(.wireguard, routing: .policy)
        try vpn.startLeakCounter()
        try vpn.startCheckServer()
        let fixture = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "all_proxy": ""])
        try fixture.writeConfig(ProbeTests.config(url: vpn.checkURL))
        fixture.commandPrefix = ["ip", "netns", "exec", vpn.client]
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(15)))
        try vpn.silenceVPNServer()
        let reason = await waitForDiagnosis(fixture, "limited", "tunnel")
        #expect(reason == "the VPN tunnel \(vpn.tunnel) passes no traffic; \(vpn.carrier) underneath reaches its router")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test func wireGuardCarrierLosingItsRouterIsTheGatewayOfTheLinkUnderneath() async throws {
        guard Harness.available(VPNLab.requirement) else { return }
        let vpn = try VPNLab(.wireguard)
        let fixture = try await startOnline(vpn)
        try vpn.silenceRouter()
        let reason = await waitForDiagnosis(fixture, "limited", "gateway")
        #expect(reason == "\(vpn.carrier) is connected but the router \(vpn.routerAddress) does not answer")
        #expect(await fixture.stop() == 0)
        try expectNoLeak(vpn)
    }

    @Test func wireGuardTakenDownIsTheRouteChange() async throws {
        guard Harness.available(VPNLab.requirement) else { return }
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

    @Test func openVPNServerSilentIsTheTunnel() async throws {
        guard Harness.available(VPNLab.openVPNRequirement) else { return }
        try await silentServerIsTunnel(try VPNLab(.openvpn))
    }

    @Test func openVPNCarrierLosingItsRouterIsTheGatewayOfTheLinkUnderneath() async throws {
        guard Harness.available(VPNLab.openVPNRequirement) else { return }
        let vpn = try VPNLab(.openvpn)
        let fixture = try await startOnline(vpn)
        try vpn.silenceRouter()
        let reason = await waitForDiagnosis(fixture, "limited", "gateway")
        #expect(reason == "\(vpn.carrier) is connected but the router \(vpn.routerAddress) does not answer")
        #expect(await fixture.stop() == 0)
    }

    @Test func openVPNTakenDownIsTheRouteChange() async throws {
        guard Harness.available(VPNLab.openVPNRequirement) else { return }
        let vpn = try VPNLab(.openvpn)
        let fixture = try await startOnline(vpn)
        try vpn.takeTunnelDown()
        _ = await Harness.waitUntil(timeout: .seconds(10), "offline") { fixture.stateJSON()?["state"] as? String == "offline" }
        #expect(fixture.stateJSON()?["state"] as? String == "offline")
        #expect(await fixture.stop() == 0)
    }
}
