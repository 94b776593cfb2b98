import Foundation
import LifelineTestKit
import Testing

/// One check server's trouble is not the user's outage: the probe with two
/// check servers on two addresses of the lab's host end, a real resolver
/// (dnsmasq) that can block a name as a DNS blocker does, a real proxy.
@Suite(.serialized) struct EndpointsTests {
    static let requirement = Harness.Requirement.rootAnd(["ip", "nft", "python3", "dnsmasq"])

    static func config(urls: [String], interval: String = "2s", timeout: String = "1s", extra: String = "") -> String {
        ProbeTests.config(url: "", interval: interval, timeout: timeout, extra: extra)
            .replacingOccurrences(of: "url = \"\"", with: "url = [" + urls.map { "\"\($0)\"" }.joined(separator: ", ") + "]")
    }

    /// Waits `span` and says whether the daemon published anything but online.
    static func staysOnline(_ fixture: DaemonFixture, for span: Duration) async throws -> Bool {
        let end = ContinuousClock.now + span
        while ContinuousClock.now < end {
            if fixture.loggedStates().contains(where: { $0 != "online" }) { return false }
            try await Task.sleep(for: .milliseconds(200))
        }
        return fixture.loggedStates() == ["online"]
    }

    @Test(.requires(EndpointsTests.requirement)) func theFirstServerBlackholedWhileTheSecondAnswersIsNoOutage() async throws {
        let lab = try ProbeLab()
        let first = try lab.addHostAddress(last: 3), second = try lab.addHostAddress(last: 4)
        let servers = [try lab.startServer(.ok, host: first, tag: "first"), try lab.startServer(.ok, host: second, tag: "second")]
        defer { servers.forEach { $0.stop() } }
        let urls = ["http://\(first):8080/check_network_status.txt", "http://\(second):8080/check_network_status.txt"]
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(urls: urls))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        // While the first answers, each round is one request, to it.
        #expect(await Harness.waitUntil(timeout: .seconds(15), "two rounds at the first") { lab.requests(tag: "first").count >= 2 })
        #expect(lab.requests(tag: "second").isEmpty, "asked the second while the first answered")

        try lab.blackhole(address: first)
        #expect(try await Self.staysOnline(fixture, for: .seconds(30)), "published \(fixture.loggedStates())")
        #expect(!lab.requests(tag: "second").isEmpty)
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(EndpointsTests.requirement)) func aCheckNameTheResolverBlocksIsNoOutageAndDiagnoseNamesTheBlocker() async throws {
        let lab = try ProbeLab()
        let second = try lab.addHostAddress(last: 4)
        let server = try lab.startServer(.ok, host: second, tag: "second")
        defer { server.stop() }
        let blocked = "check-a.\(lab.namespace).test", named = "check-b.\(lab.namespace).test"
        let dns = try lab.startResolver(answers: [(blocked, "0.0.0.0"), (named, second)])
        defer { dns.stop() }
        let urls = ["http://\(blocked):8080/check_network_status.txt", "http://\(named):8080/check_network_status.txt"]
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(urls: urls))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        #expect(try await Self.staysOnline(fixture, for: .seconds(10)), "published \(fixture.loggedStates())")

        let diagnose = try Harness.run(["ip", "netns", "exec", lab.namespace, Harness.binary, "diagnose"], environment: fixture.environment)
        #expect(diagnose.status == 0, "\(diagnose.stdout)\(diagnose.stderr)")
        #expect(diagnose.stdout.contains("answers 0.0.0.0 for \(blocked); a blocker?"), "\(diagnose.stdout)")
        #expect(diagnose.stdout.contains("\(urls[1]): online"), "\(diagnose.stdout)")
        #expect(await fixture.stop() == 0)
    }

    /// Both servers dark: an outage, as soon as with one server but for the
    /// fallback's connect bound in each round.
    @Test(.requires(EndpointsTests.requirement)) func bothServersDarkIsLimitedWithinTheBound() async throws {
        let lab = try ProbeLab()
        let first = try lab.addHostAddress(last: 3), second = try lab.addHostAddress(last: 4)
        let servers = [try lab.startServer(.ok, host: first, tag: "first"), try lab.startServer(.ok, host: second, tag: "second")]
        defer { servers.forEach { $0.stop() } }
        let urls = ["http://\(first):8080/check_network_status.txt", "http://\(second):8080/check_network_status.txt"]
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(urls: urls))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))

        try lab.blackhole()
        let start = ContinuousClock.now
        // One server's bound (timeout × failures + interval + the ramp's first
        // second + debounce + 1 s of slack), plus the second server's connect
        // bound (at most the 1 s timeout) in each of the two failed rounds.
        let bound = Duration.seconds(1 * 2 + 2) + .seconds(1) + .milliseconds(200) + .seconds(1) + .seconds(2)
        #expect(await fixture.waitForState("limited", timeout: bound + .seconds(5)))
        let took = ContinuousClock.now - start
        #expect(took <= bound, "limited after \(took), bound \(bound)")
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason.contains("\(first):8080") && reason.contains("\(second):8080"), "\(reason)")
        try lab.heal()
        #expect(await fixture.waitForState("online", timeout: .seconds(6)))
        #expect(await fixture.stop() == 0)
    }

    /// A new path whose first check server is dark: the second is started
    /// beside it after half a second, so the first verdict comes long before
    /// the first server's 5 s timeout (asked one after another, it came after).
    @Test(.requires(EndpointsTests.requirement)) func aDarkFirstServerDoesNotHoldTheFirstVerdictForItsTimeout() async throws {
        let lab = try ProbeLab()
        let first = try lab.addHostAddress(last: 3), second = try lab.addHostAddress(last: 4)
        let servers = [try lab.startServer(.ok, host: first, tag: "first"), try lab.startServer(.ok, host: second, tag: "second")]
        defer { servers.forEach { $0.stop() } }
        try lab.blackhole(address: first)
        let urls = ["http://\(first):8080/check_network_status.txt", "http://\(second):8080/check_network_status.txt"]
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(urls: urls, timeout: "5s"))
        // Well under the 5 s the first server's timeout alone takes.
        #expect(await fixture.waitForState("online", timeout: .seconds(4)), "\(fixture.loggedStates())")
        #expect(lab.requests(tag: "second").count >= 1)
        #expect(await fixture.stop() == 0)
    }

    /// Behind a portal that intercepts both check servers: once a full round
    /// saw it, the rounds ask only the endpoint it intercepted first, so
    /// sitting at a hotel's portal costs one request a round, not one per server.
    @Test(.requires(EndpointsTests.requirement)) func behindAPortalOnlyTheInterceptedEndpointIsAsked() async throws {
        let lab = try ProbeLab()
        let first = try lab.addHostAddress(last: 3), second = try lab.addHostAddress(last: 4)
        let servers = [try lab.startServer(.wrongbody, host: first, tag: "first"), try lab.startServer(.wrongbody, host: second, tag: "second")]
        defer { servers.forEach { $0.stop() } }
        let urls = ["http://\(first):8080/check_network_status.txt", "http://\(second):8080/check_network_status.txt"]
        let fixture = try ProbeTests().startDaemon(lab, config: Self.config(urls: urls))
        #expect(await fixture.waitForState("portal", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let seconds = lab.requests(tag: "second").count
        let firsts = lab.requests(tag: "first").count
        #expect(await Harness.waitUntil(timeout: .seconds(20), "three more rounds") { lab.requests(tag: "first").count >= firsts + 3 })
        #expect(lab.requests(tag: "second").count == seconds, "the second server was asked again behind the portal")
        #expect(fixture.loggedStates().last == "portal")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(EndpointsTests.requirement)) func a503BurstIsNeverAPortalAndEnoughOfItIsLimitedAtHTTP() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.unavailable)
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: lab.checkURL, interval: "1s"))
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        let status = try fixture.statusJSON()
        #expect(status["diagnosis"] as? String == "http", "\(status)")
        #expect(status["reason"] as? String == "probe to \(lab.checkURL) got HTTP 503, expected 2xx", "\(status)")
        // The burst ends: online, and no portal was ever published.
        lab.stopServers()
        try lab.startServer(.ok)
        #expect(await fixture.waitForState("online", timeout: .seconds(6)))
        #expect(!fixture.loggedStates().contains("portal"), "\(fixture.loggedStates())")
        #expect(await fixture.stop() == 0)
    }

    @Test(.requires(EndpointsTests.requirement)) func aDeadProxyIsNamedAsTheProxy() async throws {
        let lab = try ProbeLab()
        try lab.startServer(.proxy, port: 3128)
        let url = "http://check.lifeline.invalid/check_network_status.txt"
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: url),
                                                   environment: ["http_proxy": "http://\(lab.hostAddress):3128", "no_proxy": ""])
        #expect(await fixture.waitForState("online", timeout: .seconds(10)))
        lab.stopServers()
        #expect(await fixture.waitForState("limited", timeout: .seconds(10)))
        let reason = try fixture.statusJSON()["reason"] as? String ?? ""
        #expect(reason == "TCP connect to the proxy \(lab.hostAddress):3128 was refused", "\(reason)")
        #expect(await fixture.stop() == 0)
    }
}
