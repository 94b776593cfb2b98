import Foundation
import LifelineTestKit
import Testing

/// The probe speaks HTTPS with the TLS library libcurl was built with, and trusts
/// the system's certificates: a check server in the probe lab with a certificate
/// for its address, trusted only inside the lab's namespace (`ip netns exec`
/// mounts /etc/netns/NAME/ssl over /etc/ssl there; the machine's store is untouched).
@Suite(.serialized) struct HTTPSProbeTests {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "openssl"])

    @Test func anHTTPSCheckURLWithATrustedCertificateIsOnline() async throws {
        guard Harness.available(Self.requirement) else { return }
        let lab = try ProbeLab()
        let certificate = lab.workDir.appendingPathComponent("check.pem").path
        let key = lab.workDir.appendingPathComponent("check.key").path
        try ProbeLab.sh(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                         "-keyout", key, "-out", certificate, "-subj", "/CN=\(lab.hostAddress)",
                         "-addext", "subjectAltName=IP:\(lab.hostAddress)", "-addext", "basicConstraints=critical,CA:FALSE"])
        // The lab's whole trust store: the certificate as a hashed file (what a
        // CA folder holds) and as the bundle file, whichever the TLS library reads.
        let store = "/etc/netns/\(lab.namespace)/ssl/certs"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let hash = try ProbeLab.sh(["openssl", "x509", "-hash", "-noout", "-in", certificate]).trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.copyItem(atPath: certificate, toPath: "\(store)/\(hash).0")
        try FileManager.default.copyItem(atPath: certificate, toPath: "\(store)/ca-certificates.crt")

        let log = lab.workDir.appendingPathComponent("tls.log").path
        let ready = lab.workDir.appendingPathComponent("tls.ready").path
        let script = URL(fileURLWithPath: ProbeLab.script).deletingLastPathComponent().appendingPathComponent("tls_check_server.py").path
        let server = try Spawned(["python3", script, certificate, key, lab.hostAddress, "8443", log], stdout: .file(ready))
        defer { server.stop() }
        await Harness.waitUntil("the TLS check server to listen") { (try? String(contentsOfFile: ready, encoding: .utf8))?.contains("ready") == true }

        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: "https://\(lab.hostAddress):8443/check_network_status.txt"))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason.hasPrefix("probe answered in"), "\(reason)")
        let requests = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(requests.hasPrefix("GET /check_network_status.txt"), "the server read over TLS: \(requests)")
        #expect(await fixture.stop() == 0)
    }
}
