import Foundation
import LifelineTestKit
import Testing

/// An HTTPS check server on a probe lab's host end (`Resources/tls_check_server.py`),
/// with a certificate for the lab's address that only the lab's namespace trusts:
/// `ip netns exec` mounts /etc/netns/NAME/ssl over /etc/ssl there, and the lab
/// removes that folder with the rest.
final class TLSCheckServer {
    let url: String
    /// The requests the server read, one line each.
    let log: String
    private let server: Spawned

    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "openssl"])

    init(lab: ProbeLab, port: Int = 8443) async throws {
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

        log = lab.workDir.appendingPathComponent("tls.log").path
        let ready = lab.workDir.appendingPathComponent("tls.ready").path
        let script = URL(fileURLWithPath: ProbeLab.script).deletingLastPathComponent().appendingPathComponent("tls_check_server.py").path
        server = try Spawned(["python3", script, certificate, key, lab.hostAddress, "\(port)", log], stdout: .file(ready))
        url = "https://\(lab.hostAddress):\(port)/check_network_status.txt"
        await Harness.waitUntil("the TLS check server to listen") { (try? String(contentsOfFile: ready, encoding: .utf8))?.contains("ready") == true }
    }

    deinit { server.stop() }

    var requests: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
}
