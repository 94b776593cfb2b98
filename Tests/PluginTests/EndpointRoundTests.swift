import Clocks
import LifelineTestKit
import LifelineCore
import Logging
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// The round rule over several check endpoints, with the HTTP exchange
/// replaced by a script per URL: what is asked, in which order, and what is
/// published.
@Suite struct EndpointRoundTests {
    static let a = "http://a.example/check"
    static let b = "http://b.example/check"

    enum Answer: Sendable { case ok, timeout, refused, redirect, wrongBody, unavailable, blocked, silent }

    final class Script: Sendable {
        let answers: Mutex<[String: Answer]>
        let asked = Mutex<[String]>([])
        let connectTimeouts = Mutex<[String: Duration?]>([:])
        let bodyWanted = Mutex<[Int]>([])
        init(_ answers: [String: Answer]) { self.answers = Mutex(answers) }
        func set(_ url: String, _ answer: Answer) { answers.withLock { $0[url] = answer } }
        func takeAsked() -> [String] {
            asked.withLock { list in
                let taken = list
                list = []
                return taken
            }
        }
    }

    static func reply(_ request: HTTPRequest, _ answer: Answer) -> Result<HTTPReply, HTTPFailure> {
        func fail(_ kind: HTTPFailure.Kind, _ stage: HTTPFailure.Stage, _ message: String) -> Result<HTTPReply, HTTPFailure> {
            .failure(HTTPFailure(url: request.url, code: 7, kind: kind, message: message, stage: stage))
        }
        func page(_ status: Int, _ body: String, redirect: String? = nil) -> Result<HTTPReply, HTTPFailure> {
            .success(HTTPReply(status: status, headers: [], body: Array(body.utf8), truncated: false, redirect: redirect,
                               rttMs: 4, connectMs: 1))
        }
        switch answer {
        case .ok: return page(200, "NetworkManager is online\n")
        case .timeout: return fail(.timeout, .connecting, "Connection timed out")
        case .refused: return fail(.refused, .connecting, "Connection refused")
        case .redirect: return page(302, "", redirect: "http://portal.example/login")
        case .wrongBody: return page(200, "<html>Welcome to Hotel WiFi")
        case .unavailable: return page(503, "Service Unavailable")
        case .blocked: return fail(.blocked, .resolving, "0.0.0.0")
        case .silent: return fail(.timeout, .connecting, "Connection timed out")
        }
    }

    func monitor(_ script: Script, urls: [String], failures: Int = 2, clock: any Clock<Duration> = ContinuousClock()) -> ProbeMonitor {
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(),
                                    control: Bus(clock: ContinuousClock()))
        var config = ProbeMonitor.Config()
        config.url = ProbeURLs(urls)
        config.failures = failures
        config.family = .ipv4  // one family, whatever routes this machine has
        return ProbeMonitor(config: config, context: context, clock: clock, files: HostFiles(sys: "/nonexistent"),
                            fetch: { request in
                                script.asked.withLock { $0.append(request.url) }
                                script.connectTimeouts.withLock { $0[request.url] = request.connectTimeout }
                                script.bodyWanted.withLock { $0.append(request.bodyWanted) }
                                let answer = script.answers.withLock { $0[request.url] } ?? .refused
                                // A blackholed server: nothing until the probe gives up on it.
                                if case .silent = answer { try? await Task.sleep(for: .seconds(3600)) }
                                return Self.reply(request, answer)
                            })
    }

    struct Rounds {
        let monitor: ProbeMonitor
        let judge: SharedJudge
        let handle: MonitorHandle
        init(_ monitor: ProbeMonitor, failures: Int = 2) {
            self.monitor = monitor
            judge = SharedJudge(ProbeJudge(failures: failures))
            handle = Bus(clock: ContinuousClock()).makeMonitorHandle(name: "probe", remeasuresReachability: true)
        }
        /// One scheduled round; the observation it leaves published.
        func next() async -> Observation? {
            _ = await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle)
            return judge.state.withLock { $0.lastPublished }
        }
    }

    @Test func whileTheFirstAnswersEachRoundIsOneRequest() async {
        let script = Script([Self.a: .ok, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        for _ in 0..<3 { #expect(await rounds.next()?.state == .online) }
        #expect(script.takeAsked() == [Self.a, Self.a, Self.a])
    }

    /// Happy Eyeballs: a first endpoint that does not answer has the next one
    /// started beside it after the stagger (500 ms on a path where nothing is
    /// known yet), not after its own timeout; the first answer ends the round.
    @Test func aSilentFirstEndpointHasTheNextStartedAfterTheStaggerNotItsTimeout() async {
        let clock = TestClock()
        let script = Script([Self.a: .silent, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b], clock: clock))
        let round = Task { await rounds.next() }
        #expect(await eventually { script.asked.withLock { $0 } == [Self.a] })
        await clock.advance(by: .milliseconds(499))
        #expect(script.asked.withLock { $0 } == [Self.a])
        await clock.advance(by: .milliseconds(1))
        #expect(await round.value?.state == .online)
        #expect(script.takeAsked() == [Self.a, Self.b])
    }

    /// A probe reads no more of a reply than the expected prefix needs: at
    /// least 64 bytes (what a reason quotes), never a portal's whole page.
    @Test func aProbeAsksForTheBytesItsPrefixNeedsOnly() async {
        let script = Script([Self.a: .wrongBody])
        let rounds = Rounds(monitor(script, urls: [Self.a]))
        _ = await rounds.next()
        #expect(script.bodyWanted.withLock { $0 } == [64])
        #expect(ProbeMonitor.bodyWanted(prefix: String(repeating: "x", count: 100)) == 100)
    }

    /// Behind a portal, once a full round saw it, only the intercepted endpoint
    /// is asked; when it answers as expected the portal is gone, in one request.
    @Test func behindAPortalOnlyTheInterceptedEndpointIsAsked() async {
        let script = Script([Self.a: .redirect, Self.b: .wrongBody])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        #expect(await rounds.next()?.state == .portal)
        #expect(script.takeAsked().count == 2)
        for _ in 0..<3 { #expect(await rounds.next()?.state == .portal) }
        #expect(script.takeAsked() == [Self.a, Self.a, Self.a])
        script.set(Self.a, .ok)
        #expect(await rounds.next()?.state == .online)
        #expect(script.takeAsked() == [Self.a])
        // Intercepted no more, but failing: every endpoint decides again.
        script.set(Self.a, .redirect)
        #expect(await rounds.next()?.state == .portal)
        _ = script.takeAsked()
        script.set(Self.a, .refused)
        _ = await rounds.next()
        #expect(script.takeAsked() == [Self.a, Self.a, Self.b])
    }

    @Test func aDarkFirstEndpointHandsTheRoundToTheNextAtOnceAndTheNextIsAskedFirstAfter() async {
        let script = Script([Self.a: .ok, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        #expect(await rounds.next()?.state == .online)
        _ = script.takeAsked()
        script.set(Self.a, .timeout)
        for _ in 0..<4 { #expect(await rounds.next()?.state == .online) }
        // The first round found a dark, the others ask only the one that answered.
        #expect(script.takeAsked() == [Self.a, Self.b, Self.b, Self.b, Self.b])
    }

    @Test func aFallbackAfterATimeoutGetsTheUsualConnectTimeNotTheWholeTimeout() async {
        let script = Script([Self.a: .ok, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        #expect(await rounds.next()?.state == .online)  // learns a 1 ms connect
        script.set(Self.a, .timeout)
        script.set(Self.b, .timeout)
        _ = await rounds.next()
        let bound = script.connectTimeouts.withLock { $0[Self.b] } ?? nil
        #expect(bound == ConnectBound.synRetry + ConnectBound.slack, "\(String(describing: bound))")
    }

    @Test func aRoundFailsOnlyWhenEveryEndpointFailedAndTheReasonNamesEach() async {
        let script = Script([Self.a: .refused, Self.b: .unavailable])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        #expect(await rounds.next()?.state != .limited)  // one failed round is not yet an outage
        let limited = await rounds.next()
        #expect(limited?.state == .limited)
        #expect(limited?.reason == "TCP connect to a.example:80 was refused; probe to \(Self.b) got HTTP 503, expected 2xx")
        #expect(limited?.diagnosis == .tcp)
    }

    /// A resolver that resolves none of the check servers is said once, with
    /// every name; other failures keep their own sentences.
    @Test func oneResolverFailingEveryNameIsOneSentence() {
        let condensed = ProbeRound.condensed([
            "DNS (10.0.0.53) could not resolve a.example", "DNS (10.0.0.53) could not resolve b.example",
            "TCP connect to c.example:80 was refused", "DNS (10.0.0.53) could not resolve d.example",
        ])
        #expect(condensed == ["DNS (10.0.0.53) could not resolve a.example, b.example and d.example",
                              "TCP connect to c.example:80 was refused"])
        #expect(ProbeRound.condensed(["DNS (10.0.0.53) could not resolve a.example: SERVFAIL"])
            == ["DNS (10.0.0.53) could not resolve a.example: SERVFAIL"])
    }

    @Test func oneEndpointInterceptedWhileAnotherAnswersIsNotAPortal() async {
        let script = Script([Self.a: .redirect, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        #expect(await rounds.next()?.state == .online)
        script.set(Self.a, .wrongBody)
        #expect(await rounds.next()?.state == .online)
    }

    @Test func everyEndpointInterceptedIsAPortalAtOnce() async {
        let script = Script([Self.a: .redirect, Self.b: .wrongBody])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        let portal = await rounds.next()
        #expect(portal?.state == .portal)
        #expect(portal?.reason == "probe to \(Self.a) was redirected to http://portal.example/login (HTTP 302)")
    }

    @Test func aBurstOf503IsNeverAPortalAndFailuresSuchRoundsAreLimitedAtHTTP() async {
        let script = Script([Self.a: .unavailable])
        let rounds = Rounds(monitor(script, urls: [Self.a], failures: 3), failures: 3)
        var seen: [ConnectivityState] = []
        for _ in 0..<2 { seen.append(await rounds.next()?.state ?? .unknown) }
        #expect(seen == [.unknown, .unknown], "\(seen)")
        let last = await rounds.next()
        #expect(last?.state == .limited && last?.diagnosis == .http)
        #expect(last?.reason == "probe to \(Self.a) got HTTP 503, expected 2xx")
    }

    @Test func aBlockedFirstNameIsNoOutageWhileTheSecondAnswers() async {
        let script = Script([Self.a: .blocked, Self.b: .ok])
        let rounds = Rounds(monitor(script, urls: [Self.a, Self.b]))
        for _ in 0..<3 { #expect(await rounds.next()?.state == .online) }
    }

    @Test func theOrderStartsWithThePreferredEndpoint() {
        #expect(ProbeRound.order(count: 3, preferred: 0) == [0, 1, 2])
        #expect(ProbeRound.order(count: 3, preferred: 2) == [2, 0, 1])
        #expect(ProbeRound.order(count: 2, preferred: 7) == [0, 1])
        #expect(ProbeRound.order(count: 0, preferred: 0) == [])
    }

    @Test func theSignInPageIsTheFirstPlainHTTPEndpoint() {
        #expect(SignInPage.url(for: [Self.a, Self.b]) == Self.a)
        #expect(SignInPage.url(for: ["https://c.example/x", Self.b]) == Self.b)
        #expect(SignInPage.url(for: ["https://c.example/x"]) == "http://c.example/x")
        #expect(SignInPage.url(for: []) == nil)
    }
}

@Suite struct NamedCulpritTests {
    func explain(_ kind: HTTPFailure.Kind, _ stage: HTTPFailure.Stage, message: String = "", facts: PathFacts) -> (Diagnosis, String) {
        let error = HTTPFailure(url: "http://nmcheck.gnome.org/check_network_status.txt", code: 7, kind: kind, message: message, stage: stage)
        let r = FailedLayer.explain(error, timeout: .seconds(5), facts: facts)
        return (r.layer, r.sentence)
    }

    @Test func aDeadProxyIsNamedAsTheProxy() {
        let facts = PathFacts(interface: "eth0", proxy: "10.77.49.5:3128")
        #expect(explain(.refused, .connecting, facts: facts) == (.tcp, "TCP connect to the proxy 10.77.49.5:3128 was refused"))
        #expect(explain(.timeout, .connecting, facts: facts) == (.tcp, "TCP connect to the proxy 10.77.49.5:3128 timed out after 5s"))
        // Past the proxy, the sentence is the check server's as always.
        #expect(explain(.timeout, .exchanging, facts: facts).0 == .http)
    }

    @Test func aBlockerIsNamedAsTheResolverAnsweringTheUnspecifiedAddress() {
        let facts = PathFacts(interface: "eth0", resolver: "192.168.1.1")
        #expect(explain(.blocked, .resolving, message: "0.0.0.0", facts: facts)
            == (.dns, "your DNS server (192.168.1.1) answers 0.0.0.0 for nmcheck.gnome.org; a blocker?"))
    }

    @Test func theProxyOfAURLIsReadAsLibcurlReadsIt() {
        let env: [String: String] = ["https_proxy": "http://secure.example:8443"]
        let proxy = PlainHTTPProxy(httpProxy: "http://user:pw@10.0.0.5:3128/", allProxy: nil, noProxy: "local.example")
        #expect(proxy.proxy(for: "http://check.example/x", read: { env[$0] }) == "10.0.0.5:3128")
        #expect(proxy.proxy(for: "http://a.local.example/x", read: { env[$0] }) == nil)
        #expect(proxy.proxy(for: "https://check.example/x", read: { env[$0] }) == "secure.example:8443")
        #expect(PlainHTTPProxy(httpProxy: "proxy.example", allProxy: nil, noProxy: nil).proxy(for: "http://x/", read: { _ in nil })
            == "proxy.example:1080")
        #expect(PlainHTTPProxy(httpProxy: nil, allProxy: nil, noProxy: nil).proxy(for: "http://x/", read: { _ in nil }) == nil)
    }

    @Test func theUnspecifiedAddressIsRecognised() {
        #expect(PlainHTTPLookup.isUnspecified("0.0.0.0") && PlainHTTPLookup.isUnspecified("::"))
        #expect(!PlainHTTPLookup.isUnspecified("10.0.0.1") && !PlainHTTPLookup.isUnspecified("::1"))
    }
}

@Suite struct MeteredPlanTests {
    @Test func onlineProbesComeEveryMeteredIntervalOnAMeteredLink() {
        var plan = ProbePlan(interval: .seconds(30), meteredInterval: .seconds(300))
        let zero = Moment(offset: .zero)
        #expect(plan.start(at: zero) != nil)
        plan.finish(at: zero, online: true)
        #expect(plan.due == Moment(offset: .seconds(30)))
        plan.metered = true
        #expect(plan.start(at: Moment(offset: .seconds(30))) != nil)
        plan.finish(at: Moment(offset: .seconds(30)), online: true)
        #expect(plan.due == Moment(offset: .seconds(330)))
        // Not online: the first failure is confirmed at once (an outage is found as soon).
        #expect(plan.start(at: Moment(offset: .seconds(330))) != nil)
        plan.finish(at: Moment(offset: .seconds(330)), online: false)
        #expect(plan.due == Moment(offset: .seconds(330)))
    }

    /// Behind a portal or on a dead uplink the ramp climbs to
    /// `metered_interval` on a metered link, not to `interval`: the budget
    /// holds in every state.
    @Test func notOnlineOnAMeteredLinkTheRampClimbsToTheMeteredInterval() {
        func pauses(metered: Bool) -> [Duration] {
            var plan = ProbePlan(interval: .seconds(30), meteredInterval: .seconds(300))
            plan.metered = metered
            var now = Moment(offset: .zero)
            var out: [Duration] = []
            for _ in 0..<12 {
                _ = plan.start(at: now)
                plan.finish(at: now, online: false)
                let due = plan.due!
                out.append(now.duration(to: due))
                now = due
            }
            return out
        }
        #expect(pauses(metered: false).last == .seconds(30))
        #expect(pauses(metered: true) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
        // In an hour behind a portal: 12 rounds instead of 122.
    }
}
