import Foundation
import LifelineTestKit
import Testing

/// libcurl missing on the machine (removed by hand, or a package without its
/// dependency): the daemon still starts and runs, and the probe's reason and
/// `lifeline diagnose` name the library and what to install. The library is
/// hidden from the daemon alone: it runs in a mount namespace of its own where
/// /dev/null is mounted over each libcurl file.
@Suite(.serialized) struct CurlMissingTests {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "unshare", "mount", "ldconfig"])

    /// The files the loader would open: libcurl's GnuTLS flavour and the plain one, as ld.so's cache lists them.
    static func curlFiles() throws -> [String] {
        let cache = try Harness.run(["ldconfig", "-p"]).stdout
        let files = cache.split(separator: "\n").compactMap { line -> String? in
            let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
            guard ["libcurl-gnutls.so.4", "libcurl.so.4"].contains(name), let arrow = line.range(of: "=> ") else { return nil }
            return URL(fileURLWithPath: String(line[arrow.upperBound...])).resolvingSymlinksInPath().path
        }
        return Array(Set(files)).sorted()
    }

    /// Runs a command in the lab's namespace with every libcurl file hidden (or those
    /// whose path contains `only`).
    static func withoutLibcurl(_ lab: ProbeLab, only: String? = nil) throws -> [String] {
        let files = try curlFiles().filter { path in only.map { path.contains($0) } ?? true }
        #expect(files.contains { $0.contains("libcurl-gnutls.so.4") }, "ldconfig -p lists no libcurl-gnutls.so.4: \(files)")
        let mounts = files.map { "mount --bind /dev/null '\($0)'" }.joined(separator: " && ")
        return ["ip", "netns", "exec", lab.namespace, "unshare", "--mount", "--propagation", "private",
                "sh", "-c", "\(mounts) && exec \"$@\"", "without-libcurl"]
    }

    @Test(.requires(CurlMissingTests.requirement)) func theProbeSaysWhatToInstall() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok, port: 8443)  // the TCP connect succeeds: only the library is missing
        let url = "https://\(lab.hostAddress):8443/check_network_status.txt"
        let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: direct)
        try fixture.writeConfig(ProbeTests.config(url: url))
        fixture.commandPrefix = try Self.withoutLibcurl(lab)
        try fixture.start()

        #expect(await fixture.waitForState("limited", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason.hasPrefix("probe to \(url) failed: cannot load libcurl (apt install libcurl3-gnutls): "), "\(reason)")
        #expect(reason.contains("libcurl-gnutls.so.4"), "\(reason)")
        // The network answered up to TCP; what failed is the HTTP client, as diagnose says.
        let status = try fixture.statusJSON()
        #expect(status["diagnosis"] as? String == "http", "\(status)")
        #expect(fixture.daemonLog.contains("apt install libcurl3-gnutls"), "\(fixture.daemonLog)")
        #expect(fixture.process?.isRunning == true, "the daemon ended: \(fixture.daemonLog)")
        #expect(await fixture.stop() == 0)

        let env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LC_ALL": "C.UTF-8",
                   "XDG_CONFIG_HOME": lab.workDir.path, "HOME": lab.workDir.path]
        let diagnosis = try Harness.run(try Self.withoutLibcurl(lab) + [Harness.binary, "diagnose", "--url", url, "--timeout", "1s"],
                                        environment: env)
        // The layers below answer; the HTTP check is the one that says what is missing.
        let http = diagnosis.stdout.split(separator: "\n").first { $0.contains(" HTTP ") } ?? ""
        #expect(http.hasPrefix("  ✗") && http.contains("cannot load libcurl (apt install libcurl3-gnutls): ")
                && http.contains("libcurl-gnutls.so.4"), "[\(http)] \(diagnosis)")
        #expect(diagnosis.stdout.contains("  ✓  TCP ") && diagnosis.status == 1, "\(diagnosis)")
    }

    /// Without the GnuTLS flavour, libcurl.so.4 (the same ABI, built with OpenSSL)
    /// serves the probe instead.
    @Test(.requires(TLSCheckServer.requirement, CurlMissingTests.requirement)) func theOpenSSLFlavourStandsIn() async throws {
        let files = try Self.curlFiles()
        try Harness.require(missing: files.contains(where: { $0.contains("/libcurl.so.4") }) ? nil : "ldconfig -p lists no libcurl.so.4 (package libcurl4): \(files)")
        let lab = try ProbeLab()
        let server = try await TLSCheckServer(lab: lab)
        let fixture = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "",
                                                           "HTTPS_PROXY": "", "ALL_PROXY": ""])
        try fixture.writeConfig(ProbeTests.config(url: server.url))
        fixture.commandPrefix = try Self.withoutLibcurl(lab, only: "libcurl-gnutls.so.4")
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let pid = try #require(fixture.process?.pid)
        let maps = try Harness.run(["cat", "/proc/\(pid)/maps"]).stdout
        #expect(maps.contains("/libcurl.so.4") && maps.contains("/libssl.so"), "the maps name no OpenSSL libcurl: \(maps.count) bytes")
        #expect(server.requests.hasPrefix("GET /check_network_status.txt"), "the server read over TLS: \(server.requests)")
        #expect(await fixture.stop() == 0)
    }
}
