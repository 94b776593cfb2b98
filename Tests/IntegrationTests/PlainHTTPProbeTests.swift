import Foundation
import LifelineTestKit
import Testing

/// The probe's own HTTP client (plain `http://`, no proxy) against real servers
/// in the probe lab, through the real daemon and `lifeline diagnose`: what the
/// server received, and what the user reads.
@Suite(.serialized) struct PlainHTTPProbeTests {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3"])

    func url(_ lab: ProbeLab, _ path: String = "/check_network_status.txt") -> String { "http://\(lab.hostAddress):8080\(path)" }

    func reason(_ fixture: DaemonFixture) -> String { (try? fixture.statusJSON()["reason"] as? String) ?? "" }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func a200WithTheExpectedBodyIsOnlineAndTheRequestIsLibcurls() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.ok)
        defer { server.stop() }
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(
            url: url(lab, "/check_network_status.txt?x=1"), extra: "expect_body_prefix = \"NetworkManager is online\""))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        #expect(reason(fixture).hasPrefix("probe answered in"), "\(reason(fixture))")
        let head = lab.plainRequests(.ok).first ?? ""
        #expect(head == "GET /check_network_status.txt?x=1 HTTP/1.1 | Host: \(lab.hostAddress):8080 | User-Agent: Lifeline connectivity check"
            + " | Accept: */* | Cache-Control: no-cache | Connection: close", "\(head)")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func a204IsOnline() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.nocontent)
        defer { server.stop() }
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url(lab, "/generate_204"), extra: "expect_body_prefix = \"\""))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(reason(fixture))")
        #expect(lab.plainRequests(.nocontent).first?.hasPrefix("GET /generate_204 HTTP/1.1") == true)
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func aChunkedBodyIsJoinedAndJudged() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.chunked)
        defer { server.stop() }
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(
            url: url(lab), extra: "expect_body_prefix = \"NetworkManager is online\""))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(reason(fixture))")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func portalRedirectsNameTheirTargetRelativeOrAbsolute() async throws {
        let lab = try ProbeLab()
        let relative = try lab.startPlainServer(.relative)
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url(lab, "/dir/check.txt")))
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)))
        #expect(reason(fixture) == "probe to \(url(lab, "/dir/check.txt")) was redirected to http://\(lab.hostAddress):8080/dir/login?from=probe (HTTP 302)",
                "\(reason(fixture))")
        #expect(await fixture.stop() == 0)
        relative.stop()

        let absolute = try lab.startPlainServer(.absolute)
        defer { absolute.stop() }
        let second = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url(lab)))
        #expect(await second.waitForState("portal", timeout: .seconds(10)))
        #expect(reason(second) == "probe to \(url(lab)) was redirected to http://portal.example/login (HTTP 302)", "\(reason(second))")
        // Never followed.
        #expect(lab.plainRequests(.absolute).allSatisfy { !$0.contains("login") })
        #expect(await second.stop() == 0)
    }

    /// A portal that sets 300 cookies before its `Location` and keeps the
    /// connection open: the framing and the target still count.
    @Test(.requires(PlainHTTPProbeTests.requirement)) func aPortalWithManyCookiesBeforeItsLocationIsAPortal() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.cookies)
        defer { server.stop() }
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url(lab)))
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)), "\(reason(fixture))")
        #expect(reason(fixture) == "probe to \(url(lab)) was redirected to http://portal.example/login (HTTP 302)", "\(reason(fixture))")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func aServerAnsweringSomethingElseIsNamed() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.garbage)
        defer { server.stop() }
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url(lab)))
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        #expect(reason(fixture) == "\(lab.hostAddress):8080 sent no usable HTTP reply: \(lab.hostAddress) answered something that is not HTTP: \"SSH-2.0-Open…\"",
                "\(reason(fixture))")
        #expect(fixture.stateJSON()?["diagnosis"] as? String == "http")
        #expect(await fixture.stop() == 0)
    }

    /// `diagnose --timeout 1s` against a server that takes the request and never
    /// answers: the HTTP row fails, named, within the timeout (plus the walk's
    /// own checks, well under two seconds).
    @Test(.requires(DiagnosisLab.requirement)) func aServerThatNeverAnswersFailsAtTheTimeout() throws {
        let d = try DiagnosisLab()
        let server = try d.lab.startPlainServer(.silent)
        defer { server.stop() }
        let start = ContinuousClock.now
        let r = try d.diagnose(url: url(d.lab))
        let took = ContinuousClock.now - start
        #expect(r.status == 1)
        #expect(DiagnosisLab.marks(r.stdout) == DiagnoseCommandTests().expected(failingAt: "HTTP"), "\(r.stdout)")
        #expect(r.stdout.contains("\(d.lab.hostAddress):8080 accepted the connection but sent no HTTP reply within 1s"), "\(r.stdout)")
        #expect(took < .seconds(3), "diagnose took \(took)")
        #expect(d.lab.plainRequests(.silent).count == 1)
    }

    @Test(.requires(PlainHTTPProbeTests.requirement)) func anUnresolvableNameIsADNSFailureNamingIt() async throws {
        let lab = try ProbeLab()
        let name = "check-\(UInt32.random(in: 0..<0xFFFF)).lifeline.invalid"
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: "http://\(name)/check_network_status.txt"))
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        // The lab's resolver address has nothing listening: the lookup fails at
        // once, or (the kernel rate-limits its "port unreachable") times out.
        await Harness.waitUntil(timeout: .seconds(10), "the reason names the failed lookup (\(reason(fixture)))") {
            reason(fixture) == "DNS (\(lab.hostAddress)) could not resolve \(name)"
        }
        #expect(fixture.stateJSON()?["diagnosis"] as? String == "dns")
        #expect(await fixture.stop() == 0)
    }

    /// Without CAP_NET_RAW (a user's daemon) `SO_BINDTODEVICE` is refused and
    /// the probe binds to the interface's address instead, as libcurl does.
    @Test(.requires(.rootAnd(["ip", "nft", "python3", "setpriv"]))) func anInterfaceIsBoundWithoutTheRawCapabilityToo() async throws {
        let lab = try ProbeLab()
        let server = try lab.startPlainServer(.ok)
        defer { server.stop() }
        let fixture = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "all_proxy": "", "ALL_PROXY": ""])
        try fixture.writeConfig(ProbeTests.config(url: url(lab), extra: "interface = \"\(lab.namespaceInterface)\""))
        fixture.commandPrefix = ["ip", "netns", "exec", lab.namespace, "setpriv", "--bounding-set=-net_raw", "--inh-caps=-net_raw", "--"]
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        #expect(await fixture.stop() == 0)

        // Bound to loopback, the server is out of reach.
        let wrong = try DaemonFixture(extraEnvironment: ["no_proxy": "*", "http_proxy": "", "all_proxy": "", "ALL_PROXY": ""])
        try wrong.writeConfig(ProbeTests.config(url: url(lab), extra: "interface = \"lo\""))
        wrong.commandPrefix = fixture.commandPrefix
        try wrong.start()
        #expect(await wrong.waitForState("limited", timeout: .seconds(10)), "\(wrong.daemonLog)")
        #expect(reason(wrong).contains("\(lab.hostAddress):8080"), "\(reason(wrong))")
        #expect(await wrong.stop() == 0)
    }
}

/// Which client the probe uses, seen in the daemon's own memory map.
@Suite(.serialized) struct ProbeTransportTests {
    /// The daemon with its built-in defaults (`http://nmcheck.gnome.org/…`,
    /// no proxy in the environment), the lab resolver naming the check host:
    /// after its first probe round it has never mapped libcurl.
    @Test(.requires(DiagnosisLab.requirement)) func theDefaultDaemonNeverMapsLibcurl() async throws {
        let lab = try ProbeLab()
        let dns = try lab.startResolver(naming: "nmcheck.gnome.org")
        defer { dns.stop() }
        let server = try lab.startPlainServer(.ok, port: 80)
        defer { server.stop() }
        let noProxy = ["http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTP_PROXY": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: noProxy)
        fixture.commandPrefix = ["ip", "netns", "exec", lab.namespace]
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(15)), "\(fixture.daemonLog)")
        let reason = fixture.stateJSON()?["reason"] as? String ?? ""
        #expect(reason.hasPrefix("probe answered"), "\(reason)")
        #expect(lab.plainRequests(.ok).first?.hasPrefix("GET /check_network_status.txt HTTP/1.1 | Host: nmcheck.gnome.org |") == true)
        let pid = try #require(fixture.process?.pid)
        let libraries = ProbeLab.mappedLibraries(pid: pid)
        #expect(!libraries.isEmpty)
        #expect(!libraries.contains { $0.hasPrefix("libcurl") }, "mapped: \(libraries.filter { $0.hasPrefix("libcurl") })")
        #expect(await fixture.stop() == 0)
    }

    /// With `http_proxy` set, the probe goes through the proxy: libcurl's path.
    /// `HTTP_PROXY` (upper case) is not read for http://, as libcurl ignores it.
    @Test(.requires(ProbeTests.requirement)) func aProxyInTheEnvironmentKeepsLibcurl() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.proxy, port: 3128)
        let url = "http://check.lifeline.invalid/check_network_status.txt"
        let proxied = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url),
                                                   environment: ["http_proxy": "http://\(lab.hostAddress):3128", "no_proxy": ""])
        #expect(await proxied.waitForState("online", timeout: .seconds(10)))
        #expect(lab.requests(.proxy).contains { $0.hasPrefix("GET \(url) ") })
        let pid = try #require(proxied.process?.pid)
        #expect(ProbeLab.mappedLibraries(pid: pid).contains { $0.hasPrefix("libcurl") }, "mapped: \(ProbeLab.mappedLibraries(pid: pid).sorted())")
        #expect(await proxied.stop() == 0)

        let server = try lab.startPlainServer(.ok)
        defer { server.stop() }
        let before = lab.requests(.proxy).count
        let direct = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: "http://\(lab.hostAddress):8080/check"),
                                                  environment: ["HTTP_PROXY": "http://\(lab.hostAddress):3128", "no_proxy": ""])
        #expect(await direct.waitForState("online", timeout: .seconds(10)))
        #expect(lab.plainRequests(.ok).first?.hasPrefix("GET /check HTTP/1.1") == true)
        #expect(lab.requests(.proxy).count == before)
        #expect(await direct.stop() == 0)
    }
}
