import Foundation
import LifelineTestKit
import Testing

/// The probe speaks HTTPS with the TLS library libcurl was built with, and trusts
/// the system's certificates: a check server in the probe lab with a certificate
/// for its address, trusted only inside the lab's namespace (`ip netns exec`
/// mounts /etc/netns/NAME/ssl over /etc/ssl there; the machine's store is untouched).
@Suite(.serialized) struct HTTPSProbeTests {
    static let requirement = TLSCheckServer.requirement

    @Test(.requires(HTTPSProbeTests.requirement)) func anHTTPSCheckURLWithATrustedCertificateIsOnline() async throws {
        let lab = try ProbeLab()
        let server = try await TLSCheckServer(lab: lab)

        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: server.url))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason.hasPrefix("probe answered in"), "\(reason)")
        #expect(server.requests.hasPrefix("GET /check_network_status.txt"), "the server read over TLS: \(server.requests)")
        #expect(await fixture.stop() == 0)
    }
}
