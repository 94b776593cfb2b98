import Foundation
import LifelineConfig
import LifelineCore
import LifelineTOML
import Logging
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

@Suite struct ProbeJudgeTests {
    let url = "http://10.0.0.1/check"

    func expectation(status: Int? = nil, prefix: String = "NetworkManager is online", header: String = "") -> ProbeExpectation {
        ProbeExpectation(url: url, status: status, bodyPrefix: prefix, header: header, timeout: .seconds(5))
    }

    func reply(_ status: Int, _ body: String = "", headers: [String] = [], redirect: String? = nil) -> Result<HTTPReply, HTTPFailure> {
        .success(HTTPReply(status: status, headers: headers, body: Array(body.utf8), truncated: false, redirect: redirect, rttMs: 12.3))
    }

    @Test func expectedBodyIsAPong() {
        #expect(expectation().judge(reply(200, "NetworkManager is online\n")) == .pong(rttMs: 12.3))
    }

    @Test func redirectIsAPortalNamingTheTarget() {
        let outcome = expectation().judge(reply(302, headers: ["Location: /login"], redirect: "http://10.0.0.1/login"))
        #expect(outcome == .unexpected("probe to \(url) was redirected to http://10.0.0.1/login (HTTP 302)"))
    }

    @Test func wrongBodyIsAPortal() {
        guard case .unexpected(let why, _) = expectation().judge(reply(200, "<html>Welcome to Hotel WiFi")) else {
            Issue.record("not a portal")
            return
        }
        #expect(why.contains("'<html>Welcome to Hotel WiFi'"))
    }

    @Test func otherStatusIsAPortal() {
        #expect(expectation().judge(reply(511, "NetworkManager is online")) == .unexpected("probe to \(url) got HTTP 511, expected 2xx"))
    }

    @Test func statusDefaultsTo204WithoutBodyOrHeader() {
        let e = expectation(prefix: "")
        #expect(e.judge(reply(204)) == .pong(rttMs: 12.3))
        #expect(e.judge(reply(200, "<html>login")) == .unexpected("probe to \(url) got HTTP 200, expected 204"))
        #expect(expectation(status: 200, prefix: "").judge(reply(200)) == .pong(rttMs: 12.3))
    }

    @Test func headerFormIsCheckedWithoutCase() {
        let e = expectation(prefix: "", header: "X-NetworkManager-Status: online")
        #expect(e.judge(reply(200, headers: ["x-networkmanager-status:   ONLINE"])) == .pong(rttMs: 12.3))
        #expect(e.judge(reply(200, headers: ["Server: portal"])) == .unexpected("probe to \(url) got no X-NetworkManager-Status header"))
    }

    @Test func networkTextIsCleanedAndBounded() {
        let evil = "http://portal/\u{1b}[31m\n" + String(repeating: "a", count: 5000)
        guard case .unexpected(let why, _) = expectation().judge(reply(302, redirect: evil)) else {
            Issue.record("not a portal")
            return
        }
        #expect(!why.contains("\u{1b}") && !why.contains("\n"))
        #expect(why.count < 300)
    }

    @Test func failuresBecomeLimitedOnlyAfterTheConfiguredCount() {
        var judge = ProbeJudge(failures: 2)
        let online = judge.record(.pong(rttMs: 5), interface: "eth0", path: 1, afterStall: nil)
        #expect(online.state == .online && online.rttMs == 5 && online.interface == "eth0")
        // The first failure re-sends what was known on this path, so Check() gets an answer.
        #expect(judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 1, afterStall: nil) == online)
        let limited = judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 1, afterStall: nil)
        #expect(limited.state == .limited && limited.reason == "probe to x timed out after 5s")
        #expect(judge.record(.pong(rttMs: 7), interface: "eth0", path: 1, afterStall: nil).state == .online)
    }

    @Test func aNewPathRepeatsNoOldVerdictAndCountsAfresh() {
        var judge = ProbeJudge(failures: 2)
        _ = judge.record(.pong(rttMs: 5), interface: "eth0", path: 1, afterStall: nil)
        _ = judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 1, afterStall: nil)
        // The route went away and came back (path 3): the old `online` must not be
        // repeated, and the failure on path 1 does not count towards `limited`.
        let first = judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 3, afterStall: nil)
        #expect(first.state == .unknown)
        #expect(first.reason == "probe to x timed out after 5s")
        let second = judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 3, afterStall: nil)
        #expect(second.state == .limited)
    }

    @Test func aStallCountsAsOneFailure() {
        var judge = ProbeJudge(failures: 2)
        let limited = judge.record(.failed("probe to x timed out after 5s"), interface: "eth0", path: 1,
                                   afterStall: "eth0 sent packets but received none for 3s")
        #expect(limited.state == .limited)
        #expect(limited.reason == "probe to x timed out after 5s (eth0 sent packets but received none for 3s)")
    }

    @Test func portalCountsAtOnce() {
        var judge = ProbeJudge(failures: 3)
        #expect(judge.record(.unexpected("redirected"), interface: "", path: 0, afterStall: nil).state == .portal)
    }
}

@Suite struct ProbeConfigTests {
    func decode(_ toml: String) throws -> ProbeMonitor.Config {
        try ProbeMonitor.Config.decode(toml: toml)
    }

    @Test func emptyTableGivesTheSpecDefaults() throws {
        let c = try decode("")
        #expect(c.url.list == ["http://nmcheck.gnome.org/check_network_status.txt", "http://ping.archlinux.org/nm-check.txt",
                               "http://network-test.debian.org/nm"])
        #expect(c.meteredInterval == .seconds(300))
        #expect(c.expectBodyPrefix == "NetworkManager is online")
        #expect(c.expectStatus == nil && c.expectHeader == "")
        #expect(c.interval == .seconds(30) && c.timeout == .seconds(5) && c.stall == .seconds(3))
        #expect(c.failures == 2 && c.interface == "" && c.family == .any)
    }

    @Test(arguments: [
        (#"url = "ftp://example.org/x""#, "url"),
        (#"url = "file:///etc/passwd""#, "url"),
        (#"url = "http:///nohost""#, "url"),
        (#"timeout = "0s""#, "timeout"),
        (#"interval = "100ms""#, "interval"),
        (#"failures = 0"#, "failures"),
        (#"family = "ipx""#, "family"),
        (#"expect_status = 42"#, "expect_status"),
        (#"expect_header = "online""#, "expect_header"),
        (#"interface = "../../etc""#, "interface"),
        (#"url = []"#, "url"),
        (#"url = ["http://a.example/", "ftp://b.example/"]"#, "url"),
        (#"url = ["http://a.example/", "http://a.example/"]"#, "url"),
        (#"url = [1]"#, "url.0"),
        (#"metered_interval = "0s""#, "metered_interval"),
    ])
    func invalidValuesNameTheirKey(toml: String, key: String) {
        #expect { try decode(toml) } throws: { ($0 as? ConfigError)?.key == key }
    }

    @Test func urlTakesOneURLOrAList() throws {
        #expect(try decode(#"url = "http://a.example/x""#).url.list == ["http://a.example/x"])
        #expect(try decode(#"url = ["http://a.example/x", "https://b.example/y"]"#).url.list
            == ["http://a.example/x", "https://b.example/y"])
    }

    @Test func httpsAndHeaderFormAreAccepted() throws {
        let c = try decode(#"url = "https://check.example/x"\#nexpect_header = "X-NetworkManager-Status: online"\#nfamily = "ipv6""#)
        #expect(c.family == .ipv6)
    }
}

/// What the monitor sends and publishes for one probe, with libcurl replaced.
@Suite struct StallProbeTests {
    final class Sent: Sendable {
        let timeouts = Mutex<[Duration]>([])
    }

    func monitor(_ sent: Sent) -> ProbeMonitor {
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(),
                                    control: Bus(clock: ContinuousClock()))
        var config = ProbeMonitor.Config()
        config.url = "http://10.0.0.1/check"
        config.family = .ipv4  // one request, whatever routes this machine has
        return ProbeMonitor(config: config, context: context, clock: ContinuousClock(), files: HostFiles(sys: "/nonexistent"),
                            fetch: { request in
                                sent.timeouts.withLock { $0.append(request.timeout) }
                                return .failure(HTTPFailure(url: request.url, code: 28, kind: .timeout,
                                                          message: "Operation timed out", stage: .connecting))
                            })
    }

    @Test func aStallsProbeWaitsBrieflyAndItsFailureIsAnOutageAtOnce() async {
        let sent = Sent()
        let monitor = monitor(sent)
        let bus = Bus(clock: ContinuousClock())
        let handle = bus.makeMonitorHandle(name: "probe")
        let judge = SharedJudge(ProbeJudge(failures: 2))
        let online = await monitor.probeOnce(cause: .stall("eth0 sent packets but received none for 3s"), judge: judge, handle: handle)
        #expect(online == false)
        #expect(sent.timeouts.withLock { $0 } == [.milliseconds(1500)])
        #expect(judge.state.withLock { $0.lastPublished?.state } == .limited)
        let reason = judge.state.withLock { $0.lastPublished?.reason } ?? ""
        #expect(reason.contains("1500ms") && reason.contains("eth0 sent packets but received none for 3s"), "\(reason)")
    }

    @Test func aScheduledProbeWaitsTheWholeTimeoutAndOneFailureIsNotYetAnOutage() async {
        let sent = Sent()
        let monitor = monitor(sent)
        let handle = Bus(clock: ContinuousClock()).makeMonitorHandle(name: "probe")
        let judge = SharedJudge(ProbeJudge(failures: 2))
        _ = await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle)
        #expect(sent.timeouts.withLock { $0 } == [.seconds(5)])
        #expect(judge.state.withLock { $0.lastPublished } == nil)
    }
}
