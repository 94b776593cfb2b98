import Foundation
import LifelineTestKit
import Testing

/// A captive-portal API announced in DHCP (option 114) as NetworkManager
/// shows it, in its DHCP4Config's `Options` (the mock's), on the probe lab's
/// interface: the same path as the Router Advertisement's, with its own
/// source. The check server answers as expected throughout, so `portal` can
/// only come from the API.
@Suite(.serialized) struct NetworkManagerCaptivePortalTests {
    /// The lab, NetworkManager (the mock) with the lab's interface as its
    /// primary connection's device, and the daemon following both.
    func start() async throws -> (CaptivePortalLab, NetworkManagerMock, DaemonFixture) {
        let portal = try CaptivePortalLab()
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Hotel", "802-3-ethernet", portal.lab.namespaceInterface, "2")
        let fixture = try await portal.start(extra: "\n[[monitor]]\nkind = \"networkmanager\"\n", environment: nm.environment)
        return (portal, nm, fixture)
    }

    @Test(.requires(CaptivePortalLab.requirement, NetworkManagerMock.requirement))
    func networkManagersDHCPOptionIsAnnouncedAndGoesWithTheOptionAndWithNetworkManager() async throws {
        let (portal, nm, fixture) = try await start()
        defer { fixture.stopNow() }
        let iface = portal.lab.namespaceInterface
        try portal.answer(#"{"captive": true, "user-portal-url": "\#(portal.portalPage)"}"#)

        // The first lease that carries it, given to the connection.
        try nm.set("dhcp4", iface, "default_url", "s", portal.api)
        #expect(await fixture.waitForState("portal", timeout: .seconds(5)), "\(fixture.daemonLog)")
        let shown = try #require(CaptivePortalLab.portal(fixture))
        #expect(shown["source"] as? String == "networkmanager")
        #expect(shown["api"] as? String == portal.api)
        #expect(shown["captive"] as? Bool == true)
        #expect(shown["user_portal_url"] as? String == portal.portalPage)

        // A renewed lease without it (the Options change): the probe alone decides again.
        try nm.set("dhcp4", iface)
        #expect(await fixture.waitForState("online", timeout: .seconds(5)), "\(fixture.daemonLog)")
        #expect(CaptivePortalLab.portal(fixture) == nil)

        // Back, then NetworkManager leaves the bus: its word goes with it.
        try nm.set("dhcp4", iface, "default_url", "s", portal.api + "?again")
        #expect(await fixture.waitForState("portal", timeout: .seconds(5)), "\(fixture.daemonLog)")
        await nm.stop()
        #expect(await fixture.waitForState("online", timeout: .seconds(5)), "\(fixture.daemonLog)")
        #expect(CaptivePortalLab.portal(fixture) == nil)
        #expect(await fixture.stop() == 0)
    }

    /// Whatever a DHCP server (or NetworkManager) puts in the option: a clear
    /// reason in the log, the API never asked, the state the check server's.
    @Test(.requires(CaptivePortalLab.requirement, NetworkManagerMock.requirement))
    func hostileDHCPOptionsAreRefusedWithAReason() async throws {
        let (portal, nm, fixture) = try await start()
        defer { fixture.stopNow() }
        let iface = portal.lab.namespaceInterface
        try portal.answer(#"{"captive": true}"#)
        let http = "http://\(portal.lab.hostAddress):8080/capport"
        for (kind, value, reason) in [
            ("s", http, "\(iface): the announced captive-portal API '\(http)' is not an https:// URL; not asked"),
            ("big", "1000000", "\(iface): the announced captive-portal API is not a plain URL; not asked"),
            ("u", "114", "\(iface): NetworkManager's DHCP option default_url is not a string (D-Bus type u); not asked"),
        ] {
            try nm.set("dhcp4", iface, "default_url", kind, value)
            await Harness.waitUntil("'\(reason)' is logged") { fixture.daemonLog.contains(reason) }
            #expect(CaptivePortalLab.portal(fixture) == nil)
            #expect(fixture.stateJSON()?["state"] as? String == "online")
        }
        // A good one last: the API is asked for it, and was asked for nothing before.
        try nm.set("dhcp4", iface, "default_url", "s", portal.api + "?good")
        #expect(await fixture.waitForState("portal", timeout: .seconds(5)), "\(fixture.daemonLog)")
        #expect(portal.apiRequests.allSatisfy { $0.contains("?good") }, "\(portal.apiRequests)")
        #expect(await fixture.stop() == 0)
    }
}
