import LifelineCore
import LifelineNet
import Synchronization

/// `probe` monitor: the ping-pong. An HTTP request to a check URL (the
/// probe's own client for plain `http://`, libcurl for `https://` and
/// proxies: `HTTPProber`); the expected reply means `online`, another
/// reply (redirect, login page) `portal`, no reply `limited` after `failures`
/// in a row. Scheduling: every `interval` while online, 1 s doubling up to
/// `interval` while not, at once on every check request (netlink change,
/// `Check()`, resume), at most one probe at a time and one per second. Between
/// probes the primary interface's packet counters are read once a second while
/// packets leave (less and less often while none do, and at last only right
/// after each probe): when packets leave but
/// none come back for `stall`, it probes at once. The route
/// comes from the link monitor through the core: with no default route it sends
/// nothing (the link already says offline), and when the route changes it
/// abandons a probe under way and probes the new path at once. A verdict is
/// published for the path it was measured on, and failures are counted afresh
/// on every new path.
///
/// Config keys:
/// - `url` (string or list of strings, default: GNOME's, Arch Linux's and
///   Debian's check URLs): http or https only. Each round asks one endpoint
///   (the last that answered); when it fails (no answer, refused, a DNS
///   error or block, an HTTP error status), or has not answered within its
///   usual time, the next starts beside it, and the round fails only when
///   every endpoint failed. Every
///   endpoint must answer as the `expect_*` keys say. Redirects are never
///   followed: they mean `portal`, unless another endpoint answers as expected.
///   Proxies come from the environment (`http_proxy`, `https_proxy`, `no_proxy`).
/// - `expect_status` (integer, optional): the status the reply must have. Unset:
///   any 2xx when `expect_body_prefix` or `expect_header` is set, else 204
///   (the `generate_204` convention).
/// - `expect_body_prefix` (string, default `"NetworkManager is online"`): the
///   body must start with it; `""` checks no body. Only as many bytes as it
///   has (at least 64, which a reason quotes) are read.
/// - `expect_header` (string, default `""`): a header the reply must carry,
///   `"X-NetworkManager-Status: online"` (name and value compared without case).
/// - `interval` (duration, default `"30s"`): between probes while online.
/// - `metered_interval` (duration, default `"5m"`): between probes while online
///   on a connection NetworkManager calls metered, and the longest pause
///   between them while not online there; the stall detector keeps watching
///   the interface in between.
/// - `timeout` (duration, default `"5s"`): for the whole exchange. While an
///   answer stands, a connection not up after 1 s + max(250 ms, 3 × the check
///   server's recent connect times) fails the probe early (its SYN and the
///   retransmission were lost), and a second probe confirms at once.
/// - `failures` (integer, default 2): failed probes in a row before `limited`;
///   a stall seen on the interface counts as one.
/// - `stall` (duration, default `"3s"`): packets out, none in, for this long → probe now,
///   waiting 1.5 s at most (or `timeout` if shorter) for the answer.
/// - `interface` (string, default `""`): bind probes to this interface (and watch
///   its counters); empty: the interface of the default route.
/// - `family` (`"any"`, `"ipv4"` or `"ipv6"`, default `"any"`): address family of the
///   probe. `any` probes each family that has a default route side by side
///   (one probe in flight per family): either answering is `online`, and a
///   family that fails meanwhile is named in the reason and in `families`.
/// - `captive_portal_ca` (string, default `""`): a file of CA certificates to
///   trust for the captive-portal API instead of the system's (a test's own CA).
/// - `quality` (bool, default true): while the user's traffic flows (the
///   counters say so; an idle machine is not read), read the kernel's
///   numbers for the TCP connections through the interface (sock_diag) and
///   publish how well the connection works: `good`, `degraded` or `poor`
///   (`QualityEstimator`). No packet is sent for it.
///
/// Where the network announced a captive-portal API on the path (RFC 8910;
/// the link monitor reads the announcement), the probe also asks that API
/// (`CaptivePortalAPI`): `captive: true` is `portal` at once, and every
/// verdict carries the API's answer.
public struct ProbeMonitor: Monitor {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }

        public typealias Family = AddressFamily

        /// Three check servers run by three organisations, each answering
        /// 200 "NetworkManager is online" (and GNOME's also the
        /// `X-NetworkManager-Status: online` header): the URIs distributions
        /// ship in NetworkManager's connectivity config (GNOME's default
        /// `nmcheck.gnome.org`; Arch Linux's `networkmanager` package,
        /// `/usr/lib/NetworkManager/conf.d/20-connectivity.conf`; Debian's
        /// `network-manager-config-connectivity-debian`,
        /// `20-connectivity-debian.conf`), none of which leaves `response`
        /// at anything but NetworkManager's default text. None is a host a
        /// guest network lets through before sign-in, as some do for Apple's
        /// and Google's check hosts. The first is the one the sign-in page opens.
        public var url: ProbeURLs = [
            "http://nmcheck.gnome.org/check_network_status.txt",
            "http://ping.archlinux.org/nm-check.txt",
            "http://network-test.debian.org/nm",
        ]
        public var expectStatus: Int?
        public var expectBodyPrefix = "NetworkManager is online"
        public var expectHeader = ""
        public var interval = ConfigDuration.seconds(30)
        public var meteredInterval = ConfigDuration.seconds(300)
        public var timeout = ConfigDuration.seconds(5)
        public var failures = 2
        public var stall = ConfigDuration.seconds(3)
        public var interface = ""
        public var family = Family.any
        public var captivePortalCA = ""
        public var quality = true

        enum CodingKeys: String, CodingKey {
            case url
            case expectStatus = "expect_status"
            case expectBodyPrefix = "expect_body_prefix"
            case expectHeader = "expect_header"
            case interval
            case meteredInterval = "metered_interval"
            case timeout, failures, stall, interface, family, quality
            case captivePortalCA = "captive_portal_ca"
        }

        /// The `expect_*` keys as one value, for the check and `diagnose`'s walk.
        public var expectedReply: ExpectedReply {
            ExpectedReply(status: expectStatus, bodyPrefix: expectBodyPrefix, header: expectHeader)
        }

        public func validate() throws(ConfigValueError) {
            guard !url.list.isEmpty else { throw ConfigValueError(key: "url", "must name at least one URL") }
            guard url.list.count <= 8 else { throw ConfigValueError(key: "url", "names \(url.list.count) URLs: 8 at most") }
            for url in url.list {
                let lower = url.lowercased()
                guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
                    throw ConfigValueError(key: "url", "must be an http:// or https:// URL, got '\(url)'")
                }
                let rest = url.drop { $0 != "/" }.dropFirst(2)
                guard let host = rest.split(separator: "/", omittingEmptySubsequences: false).first, !host.isEmpty,
                      !url.contains(where: { $0.isWhitespace })
                else {
                    throw ConfigValueError(key: "url", "must name a host without spaces, got '\(url)'")
                }
            }
            if Set(url.list).count != url.list.count { throw ConfigValueError(key: "url", "names one URL twice") }
            if let expectStatus { try require("expect_status", expectStatus, in: 100...599) }
            if !expectHeader.isEmpty {
                let (name, value) = ProbeExpectation.split(header: expectHeader)
                guard !name.isEmpty, !value.isEmpty, !name.contains(" ") else {
                    throw ConfigValueError(key: "expect_header", "must look like \"Name: value\", got '\(expectHeader)'")
                }
            }
            try require("timeout", timeout, in: .milliseconds(100)...(.seconds(120)))
            try require("interval", interval, in: .seconds(1)...(.seconds(86400)))
            try require("metered_interval", meteredInterval, in: .seconds(1)...(.seconds(86400)))
            try require("stall", stall, in: .seconds(1)...(.seconds(3600)))
            try require("failures", failures, in: 1...100)
            guard captivePortalCA.isEmpty || captivePortalCA.hasPrefix("/") else {
                throw ConfigValueError(key: "captive_portal_ca", "must be an absolute path or \"\", got '\(captivePortalCA)'")
            }
            guard interface.count <= 15, !interface.contains("/"), !interface.contains(where: { $0.isWhitespace }) else {
                throw ConfigValueError(key: "interface", "is not an interface name: '\(interface)'")
            }
        }
    }

    public static let kind = "probe"
    public static let summary = "Checks the internet with an HTTP request: online, portal or limited."

    let config: Config
    let context: PluginContext
    let clock: any Clock<Duration>
    let files: HostFiles
    let fetch: @Sendable (HTTPRequest) async -> Result<HTTPReply, HTTPFailure>

    public init(config: Config, context: PluginContext) throws {
        self.init(config: config, context: context, clock: ContinuousClock(), files: HostFiles(), fetch: HTTPProber.fetch)
    }

    init(config: Config, context: PluginContext, clock: any Clock<Duration>, files: HostFiles,
         fetch: @escaping @Sendable (HTTPRequest) async -> Result<HTTPReply, HTTPFailure>) {
        self.config = config
        self.context = context
        self.clock = clock
        self.files = files
        self.fetch = fetch
    }

    public static func remeasuresReachability(_ config: Config) -> Bool { true }

    /// The client of the network's captive-portal API, with this probe's settings.
    var portalAPI: CaptivePortalAPI {
        CaptivePortalAPI(settings: .init(timeout: config.timeout.duration, interface: config.interface,
                                         caFile: config.captivePortalCA.isEmpty ? nil : config.captivePortalCA),
                         logger: context.logger)
    }

    func expectation(url: String) -> ProbeExpectation {
        ProbeExpectation(url: url, reply: config.expectedReply, timeout: config.timeout.duration)
    }

    /// The interface probes leave by on `path`: the configured one, else the
    /// default route's ("" when no link monitor runs: the kernel routes it).
    /// Nil when there is no default route, so nothing to probe.
    func probeInterface(on path: LinkPath) -> String? {
        if path.isOffline { return nil }
        return config.interface.isEmpty ? path.interface ?? "" : config.interface
    }

    public func run(handle: MonitorHandle) async throws {
        // Until the link monitor has spoken the path is unknown, and the core
        // forgets a verdict measured then as soon as it speaks (the path
        // changed): a first probe sent at once was made twice at every start.
        // So it waits for that word (the path change probes at once), or
        // `firstWordWait` at most (no link monitor runs).
        let firstProbe = handle.path.known ? Duration.zero : Self.firstWordWait
        let scheduler = ProbeScheduler(clock: clock, interval: config.interval.duration, firstProbeAfter: firstProbe,
                                       meteredInterval: config.meteredInterval.duration)
        let judge = SharedJudge(ProbeJudge(failures: config.failures))
        // The page a portal intercepts: the first endpoint, over plain HTTP
        // (a portal cannot answer for an https:// URL without a certificate
        // warning). Never a URL a reply named.
        if let page = SignInPage.url(for: config.url.list) { handle.announceSignInPage(page) }
        let requests = handle.checkRequests()
        let paths = handle.pathChanges()
        let api = portalAPI
        let apiPaths = handle.pathChanges()
        let quality = config.quality ? QualityWatch(time: scheduler.time) { handle.reportQuality($0) } : nil
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in requests {
                    scheduler.trigger(.request)
                    // A check after the sign-in page was opened: the API knows first.
                    api.refetch(asked: true)
                }
            }
            group.addTask {
                await api.run(handle: handle, paths: apiPaths, clock: clock, fetch: fetch) { scheduler.trigger(.request) }
            }
            group.addTask {
                var last: LinkPath?
                for await path in paths {
                    if let last, !path.isOffline, path.generation != last.generation { scheduler.trigger(.pathChanged) }
                    last = path
                }
            }
            group.addTask {
                await watchCounters(scheduler: scheduler, path: { handle.path }, quality: quality)
            }
            group.addTask {
                await scheduler.run { cause in
                    let online = await probeOnce(cause: cause, judge: judge, handle: handle, api: api, quality: quality)
                    // Read once a round: a link that turns metered is probed
                    // seldom from the next round on.
                    scheduler.setMetered(handle.metered)
                    return online
                }
            }
        }
    }

    /// One probe. Returns whether it got the expected reply, nil when skipped.
    func probeOnce(
        cause: ProbeCause, judge: SharedJudge, handle: MonitorHandle, api: CaptivePortalAPI? = nil, quality: QualityWatch? = nil
    ) async -> Bool? {
        let path = handle.path
        guard let interface = probeInterface(on: path) else {
            context.logger.debug("no default route: probe skipped")
            return nil
        }
        // Each family with a default route is probed on its own, side by side:
        // IPv6 can be broken while IPv4 works.
        let families: [Config.Family] = config.family == .any ? files.defaultRouteFamilies(interface: interface) : [config.family]
        context.logger.debug("probing (\(cause))")
        let timeout = self.timeout(for: cause)
        // While the check server's answer on this path stands, a connection that
        // does not come up within its usual time means the answer is gone: that
        // round fails early, and the next one confirms at once.
        let confirming = !cause.isEvidence && judge.state.withLock {
            $0.path == path.generation && $0.lastPublished?.state == .online
        }
        let outcomes = await withTaskGroup(of: (Config.Family, ProbeRound).self) { group in
            for family in families.isEmpty ? [Config.Family.any] : families {
                let connectTimeout = confirming
                    ? judge.connects.withLock { $0.bound(family: family.rawValue, path: path.generation, timeout: timeout) }
                    : timeout
                // A fallback asked after an endpoint timed out gets no more
                // than the usual connect time: the uplink may be dark, and the
                // round must not wait out every endpoint's whole timeout.
                let fallbackConnect = judge.connects.withLock { $0.bound(family: family.rawValue, path: path.generation, timeout: timeout) }
                let stagger = Self.stagger(usualConnect: judge.connects.withLock { $0.usual(family: family.rawValue, path: path.generation) })
                let preferred = judge.preferred.withLock { $0[family.rawValue] ?? 0 }
                // Behind a portal that was seen on a full round, only the endpoint it intercepted
                // is asked: the others cost requests (and pages) and would tell nothing new.
                let intercepted = judge.state.withLock { $0.path == path.generation && $0.lastPublished?.state == .portal }
                    ? judge.intercepted.withLock { $0[family.rawValue] } : nil
                group.addTask {
                    let learn: @Sendable (Double) -> Void = { ms in
                        judge.connects.withLock { $0.record(.milliseconds(ms), family: family.rawValue, path: path.generation) }
                    }
                    var round = ProbeRound()
                    if let intercepted {
                        round = await self.round(family: family, interface: interface, timeout: timeout, connectTimeout: connectTimeout,
                                                 fallbackConnect: fallbackConnect, preferred: preferred, stagger: stagger,
                                                 only: intercepted, learn: learn)
                    }
                    // Still intercepted: the portal stands; the expected reply: it is gone.
                    // A failure: every endpoint decides.
                    if intercepted == nil || !(round.isIntercepted || round.answered(in: config.url.list) != nil) {
                        round = await self.round(family: family, interface: interface, timeout: timeout, connectTimeout: connectTimeout,
                                                 fallbackConnect: fallbackConnect, preferred: preferred, stagger: stagger, learn: learn)
                    }
                    if let answered = round.answered(in: config.url.list) {
                        judge.preferred.withLock { $0[family.rawValue] = answered }
                    }
                    judge.intercepted.withLock { $0[family.rawValue] = round.intercepted(in: config.url.list) }
                    return (family, round)
                }
            }
            var all: [(Config.Family, ProbeRound)] = []
            for await outcome in group { all.append(outcome) }
            return all.sorted { $0.0 == .ipv4 && $1.0 != .ipv4 }
        }
        if Task.isCancelled { return nil }
        var stallNote: String?
        if case .stall(let note) = cause { stallNote = note }
        var observation = judge.state.withLock {
            $0.record(families: outcomes.map { ($0.0.rawValue, $0.1.outcome) }, interface: interface, path: path.generation,
                      afterStall: stallNote)
        }
        api?.annotate(&observation, measuredOn: path)
        for (family, round) in outcomes {
            context.logger.debug("probe (\(cause), \(family)): \(round.verdicts.map { "\($0.url): \($0.outcome)" })")
        }
        handle.publish(observation, measuredOn: path)
        quality?.probe(outcomes.flatMap { $0.1.verdicts.map(\.outcome) }, generation: path.generation)
        return outcomes.contains { ProbeJudge.isOnline($0.1.outcome) }
    }

    /// One round over one family, started as Happy Eyeballs starts
    /// connections: the endpoint that answered last first, the next one as
    /// soon as the one before failed or has not answered within `stagger`,
    /// and the first expected reply ends the round (the others are cancelled).
    /// While the first answers in its usual time a round is one request; when
    /// it is dark the next is asked after `stagger`, not after its timeout.
    /// The first gets `connectTimeout`; one started after another went
    /// silent gets `fallbackConnect` for its connection (the check servers'
    /// usual connect time, or the whole timeout while none is known).
    /// `only`: ask just this endpoint (the one a portal intercepts).
    func round(family: Config.Family, interface: String, timeout: Duration, connectTimeout: Duration,
               fallbackConnect: Duration, preferred: Int, stagger: Duration, only: Int? = nil,
               learn: @escaping @Sendable (Double) -> Void) async -> ProbeRound {
        let order = only.map { [$0] } ?? ProbeRound.order(count: config.url.list.count, preferred: preferred)
        enum Event: Sendable {
            case answered(url: String, ProbeOutcome, silent: Bool)
            /// The endpoint started `started`-th has had its `stagger`.
            case waited(started: Int)
        }
        let time = TimeSource(clock)
        return await withTaskGroup(of: Event.self) { group in
            var round = ProbeRound()
            var started = 0, running = 0
            var silent = false
            func startNext() {
                let url = config.url.list[order[started]]
                let connect = silent ? min(connectTimeout, fallbackConnect) : connectTimeout
                group.addTask {
                    let (outcome, silent) = await probe(url: url, family: family, interface: interface, timeout: timeout,
                                                        connectTimeout: connect, learn: learn)
                    return .answered(url: url, outcome, silent: silent)
                }
                started += 1
                running += 1
                if started < order.count {
                    let which = started
                    // From now, not from when the child task first runs.
                    let due = time.now().advanced(by: stagger)
                    group.addTask {
                        try? await time.sleep(due)
                        return .waited(started: which)
                    }
                }
            }
            startNext()
            while running > 0, let event = await group.next() {
                if Task.isCancelled { break }
                switch event {
                case .answered(let url, let outcome, let wasSilent):
                    running -= 1
                    round.verdicts.append((url, outcome))
                    if !ProbeRound.asksOn(after: outcome) {
                        group.cancelAll()
                        return round
                    }
                    silent = silent || wasSilent
                    // Failed: the next one now, if it has not started yet.
                    if started < order.count { startNext() }
                case .waited(let which):
                    // The latest one has not answered in its usual time: the next one too.
                    if which == started, started < order.count {
                        silent = true
                        startNext()
                    }
                }
            }
            group.cancelAll()
            return round
        }
    }

    /// The body bytes a probe reads: as many as the expected prefix has, which
    /// decide whether it matches, and at least `quotedBody`, which the reason
    /// quotes when it does not. A portal's page is never read further.
    static func bodyWanted(prefix: String) -> Int { max(prefix.utf8.count, quotedBody) }
    static let quotedBody = 64

    /// How long an endpoint may take before the next is started beside it:
    /// its usual answer (250 ms, or 3 × the check servers' recent connect
    /// time, an exchange being two round trips and a bit), and 500 ms while
    /// nothing is known of this path.
    static func stagger(usualConnect: Duration?) -> Duration {
        guard let usualConnect else { return .milliseconds(500) }
        return max(ConnectBound.slack, usualConnect * ConnectBound.factor)
    }

    /// How long a probe for `cause` waits for its answer. After a stall (the
    /// user's packets got no answer for `stall`) the probe only confirms what the
    /// counters saw, so it waits `stallTimeout` at most: a working path answers
    /// an HTTP check well within it, and an outage is published seconds sooner.
    func timeout(for cause: ProbeCause) -> Duration {
        if case .stall = cause { return min(config.timeout.duration, Self.stallTimeout) }
        return config.timeout.duration
    }

    static let stallTimeout = Duration.milliseconds(1500)

    /// How long the first probe waits for the link monitor's first word.
    static let firstWordWait = Duration.milliseconds(500)

    /// One request over one family (`.any`: whichever the kernel picks), judged,
    /// and whether it timed out before it connected (nothing answered at all).
    /// `learn` hears how long the connect took when the server answered.
    func probe(url: String, family: Config.Family, interface: String, timeout: Duration, connectTimeout: Duration? = nil,
               learn: @Sendable (Double) -> Void = { _ in }) async -> (ProbeOutcome, silent: Bool) {
        var request = HTTPRequest(url: url, timeout: timeout, interface: config.interface, family: family)
        request.connectTimeout = connectTimeout
        request.bodyWanted = Self.bodyWanted(prefix: config.expectBodyPrefix)
        let tunnel = TunnelWatch.start(url: url, family: family, files: files)
        let result = await fetch(request)
        if case .success(let reply) = result {
            if reply.truncated { context.logger.debug("probe read the first \(request.bodyWanted) bytes of the reply") }
            if let connectMs = reply.connectMs { learn(connectMs) }
        }
        var facts = PathFacts(interface: interface)
        if case .failure = result {
            facts = files.pathFacts(interface: interface, family: family)
            facts.proxy = PlainHTTPProxy.fromEnvironment().proxy(for: url)
            facts.tunnel = tunnel?.finish(files: files)
        }
        var expectation = self.expectation(url: url)
        expectation.timeout = timeout
        // A connect cut short by its bound is named with the bound it had.
        if case .failure(let error) = result, error.kind == .timeout, error.stage <= .connecting, let connectTimeout {
            expectation.timeout = min(timeout, connectTimeout)
        }
        var silent = false
        if case .failure(let error) = result, error.kind == .timeout, error.stage <= .connecting { silent = true }
        return (expectation.judge(result, facts: facts), silent)
    }

    /// Samples the primary interface's counters, once a second while the user's
    /// traffic flows and less and less often while it does not (`CounterPace`;
    /// the link's own chatter is not traffic), then right after each probe:
    /// a stall (while online) probes at once, and so do packets arriving again
    /// after one (while not online).
    func watchCounters(scheduler: ProbeScheduler, path: @escaping @Sendable () -> LinkPath,
                       counters read: ((String) -> PacketCounters?)? = nil, quality: QualityWatch? = nil) async {
        let read = read ?? files.counters(of:)
        let time = scheduler.time
        var detector = StallDetector(window: config.stall.duration)
        var pace = CounterPace(longest: config.interval.duration)
        var delay = pace.delay
        var lastSample = time.now()
        while !Task.isCancelled {
            let wake = time.now().advanced(by: delay)
            let ahead = scheduler.plan
            // Online, backing off, and the next probe comes first: sample right
            // after it, on the thread that takes its result, instead of waking
            // for a timer of our own. An idle machine is then woken by the
            // probe alone (its own packets are discounted as always). While
            // offline or limited a probe may wait out its whole timeout, and
            // answers coming back must be seen while it does: only once no
            // traffic has been seen for so long that the watcher has backed
            // off all the way to the interval, which is as seldom as the
            // probes come then, does it ride them too.
            let quiet = !detector.sawTraffic && !detector.stalled
            if quiet, ahead.online == true || delay >= pace.longest, let due = ahead.due, due <= wake {
                await scheduler.nextProbeEnded()
                if Task.isCancelled { return }
            } else {
                do { try await time.sleep(wake) } catch { return }
            }
            let now = time.now()
            let plan = scheduler.plan
            // A probe's own packets come as it starts (handshake, request) and as it
            // ends (reply, close): only those samples discount them. Samples in the
            // middle of a long probe (a blackholed one retrying its SYN) see the
            // user's packets alone, so answers coming back are seen while it waits.
            let started = plan.lastStart.map { $0 > lastSample } ?? false
            let ended = plan.lastEnd.map { $0.advanced(by: detector.probeGrace) > lastSample } ?? false
            let busy = started || ended
            lastSample = now
            guard let interface = probeInterface(on: path()), let counters = read(interface) else {
                delay = pace.next(traffic: false, stalled: false)
                continue
            }
            // The probe's reply is among the packets in only if the probe that
            // ended got one (`online`: the last probe's verdict); one still
            // under way, or one that failed, brought nothing in.
            let replied = ended && plan.online == true
            let signal = detector.sample(interface: interface, counters: counters, at: now, probeBusy: busy, probeReplied: replied)
            // While a stall stands, a sample whose packets a probe hid says
            // nothing of the user's: the delay stays as it was (twice a second
            // while answers are awaited) instead of backing off, which delayed
            // the news of a healed upstream by up to two seconds.
            if !(busy && detector.stalled) {
                delay = pace.next(traffic: detector.sawTraffic, stalled: detector.stalled)
            }
            // The connections' own numbers, on this wake-up, only while the
            // user's traffic flows: an idle machine is never read for them.
            if detector.sawTraffic, !detector.stalled, let quality {
                let now = path()
                quality.sample(interface: interface.isEmpty ? now.interface ?? "" : interface, generation: now.generation,
                               at: time.now())
            }
            switch signal {
            case .stall(let since)?:
                let seconds = Int(since.duration(to: now).milliseconds / 1000)
                context.logger.debug("\(interface) sent packets but received none for \(seconds)s")
                if plan.online != false {
                    scheduler.trigger(.stall("\(interface) sent packets but received none for \(seconds)s"))
                }
            case .resumed?:
                if plan.online == false { scheduler.trigger(.resumed) }
            case nil:
                break
            }
        }
    }
}

/// The judge's state, shared between probe runs (which never overlap), and
/// what the runs learned of the check server's usual connect time.
final class SharedJudge: Sendable {
    let state: Mutex<ProbeJudge>
    let connects = Mutex(ConnectBound())
    /// Per family: the index of the endpoint that answered last, asked first.
    let preferred = Mutex<[String: Int]>([:])
    /// Per family: the index of the endpoint the last round found intercepted
    /// (a round whose outcome was a portal), the one asked while it stands.
    let intercepted = Mutex<[String: Int]>([:])
    init(_ judge: ProbeJudge) { state = Mutex(judge) }
}
