import CNetlink
import Glibc
import LifelineCore
import LifelinePlatform

/// `lifeline diagnose`: every layer checked now, in order, for each address
/// family that has a default route (link, carrier, address, route, gateway,
/// DNS, TCP, HTTP), with its time. The first layer that fails is the verdict;
/// the layers above it are not checked. Blocking: run it on a thread of its own.
public enum LayerWalk {
    public enum Mark: String, Sendable { case ok, fail, skipped }

    public struct Step: Sendable, Equatable {
        /// "ipv4" or "ipv6".
        public var family: String
        public var layer: Diagnosis
        public var mark: Mark
        public var detail: String
        public var milliseconds: Double
    }

    public struct Report: Sendable {
        public var steps: [Step]
        public var state: ConnectivityState
        public var diagnosis: Diagnosis
        public var reason: String
        public var families: FamilyStates
        /// Every check URL asked once, with its own verdict, in the configured order.
        public var endpoints: [Endpoint] = []
    }

    /// One check URL's verdict: `online` (the expected reply), `portal` (an
    /// interception) or `limited` (it failed), and why.
    public struct Endpoint: Sendable, Equatable {
        public var url: String
        public var state: ConnectivityState
        public var detail: String
        public var milliseconds: Double
    }

    /// The layers in the order they are walked.
    public static let layers: [Diagnosis] = [.link, .carrier, .address, .route, .gateway, .dns, .tcp, .http]

    /// `reply`: the expected reply (status, body, header), judged as the probe
    /// judges it; `url` and `timeout` are given apart, as the CLI may override them.
    public static func run(url: String, timeout: Duration, expecting reply: ExpectedReply, files: String = "") -> Report {
        run(urls: [url], timeout: timeout, expecting: reply, files: files)
    }

    /// The layers walked with the first URL, then (when there are several)
    /// every URL asked once: the
    /// round's outcome follows the probe's rule (any endpoint answering as
    /// expected is `online`, one server's trouble is not the network's).
    public static func run(urls: [String], timeout: Duration, expecting reply: ExpectedReply, files: String = "") -> Report {
        var report = walk(url: urls.first ?? "", timeout: timeout, expecting: reply, files: files)
        // One URL: its walk's HTTP check is its verdict. No route: no endpoint can answer.
        guard urls.count > 1, report.state != .offline else { return report }
        var round = ProbeRound()
        let facts = HostFiles(sys: files + "/sys", resolvConf: files + "/etc/resolv.conf").pathFacts(interface: "")
        for url in urls {
            let expectation = ProbeExpectation(url: url, reply: reply, timeout: timeout)
            var endpointFacts = facts
            endpointFacts.proxy = PlainHTTPProxy.fromEnvironment().proxy(for: url)
            let start = ContinuousClock.now
            let outcome = expectation.judge(HTTPProber.fetchBlocking(HTTPRequest(url: url, timeout: timeout)), facts: endpointFacts)
            let ms = (ContinuousClock.now - start).milliseconds
            round.verdicts.append((url, outcome))
            let entry: Endpoint = switch outcome {
            case .pong(let rtt): Endpoint(url: url, state: .online, detail: "expected reply in \(Int(rtt.rounded())) ms", milliseconds: ms)
            case .unexpected(let why, _): Endpoint(url: url, state: .portal, detail: why, milliseconds: ms)
            case .failed(let why, _): Endpoint(url: url, state: .limited, detail: why, milliseconds: ms)
            }
            report.endpoints.append(entry)
        }
        // The walk stopped above the route with the first URL, but another
        // endpoint answered: the network works; the first server's trouble is named.
        if report.state != .online, report.state != .offline, ProbeJudge.isOnline(round.outcome),
           let good = report.endpoints.first(where: { $0.state == .online }) {
            report.reason = "\(good.url) answers; \(report.reason)"
            report.state = .online
            report.diagnosis = .none
        }
        return report
    }

    package static func walk(url: String, timeout: Duration, expecting reply: ExpectedReply, files: String) -> Report {
        let expectation = ProbeExpectation(url: url, reply: reply, timeout: timeout)
        let host = HostFiles(sys: files + "/sys", resolvConf: files + "/etc/resolv.conf")
        var steps: [Step] = []
        var families = FamilyStates()
        var firstFailure: (Diagnosis, String)?
        // Routes only: the walk reads the router's neighbour entry when it gets there.
        var readFailure: String?
        var gateways: [DefaultGateway] = []
        do { gateways = try GatewayReader.read(neighbours: false).gateways } catch { readFailure = error.description }
        var routes: [(String, DefaultGateway?)] = [("ipv4", gateways.first { $0.family == .ipv4 }),
                                                   ("ipv6", gateways.first { $0.family == .ipv6 })]
        // A URL naming an address can only be reached over that address's family.
        let target = FailedLayer.Target(url: url)
        if target.isAddress { routes.removeAll { $0.0 == (target.host.contains(":") ? "ipv4" : "ipv6") } }
        let anyRoute = routes.contains { $0.1 != nil }
        for (family, route) in routes where route != nil || (!anyRoute && family == routes.first?.0) {
            var walk = FamilyWalk(family: family, host: host, expectation: expectation, route: route, readFailure: readFailure)
            walk.run()
            steps += walk.steps
            let failed = walk.steps.first { $0.mark == .fail }
            let state: ConnectivityState = failed.map { f in
                switch walk.blamed ?? f.layer {
                case .link, .carrier, .address, .route: .offline
                case .portal: .portal
                default: .limited
                }
            } ?? .online
            if route != nil { families.set(family, state) }
            if let failed, firstFailure == nil || family == "ipv4" && state != .online {
                firstFailure = (walk.blamed ?? failed.layer, walk.sentence ?? failed.detail)
            }
        }
        // Online when any family with a route gets the expected reply.
        let online = families.entries.contains { $0.state == .online }
        let state: ConnectivityState = online ? .online
            : (families.entries.map(\.state).max() ?? .offline)
        if online {
            let broken = families.entries.filter { $0.state != .online }.map { $0.family == "ipv4" ? "IPv4" : "IPv6" }
            let reason = broken.isEmpty ? "every layer answers" : "\(broken.joined(separator: " and ")) broken: \(firstFailure?.1 ?? "")"
            return Report(steps: steps, state: .online, diagnosis: .none, reason: reason, families: families)
        }
        let (layer, reason) = firstFailure ?? (.route, "no default route")
        return Report(steps: steps, state: state, diagnosis: layer, reason: reason, families: families)
    }
}

/// One family's walk, layer by layer, stopping at the first failure.
private struct FamilyWalk {
    package let family: String
    package let host: HostFiles
    package let expectation: ProbeExpectation
    package let route: DefaultGateway?
    /// Why the routing table could not be read, when it could not.
    package let readFailure: String?
    package var steps: [LayerWalk.Step] = []
    /// The probe's sentence for a failure above the route.
    package var sentence: String?
    /// The layer the failure is put down to.
    package var blamed: Diagnosis?
    private var failed = false
    /// The tunnel the checks go through, its counters when its row was read, and the link underneath.
    private var tunnelWatch: TunnelWatch?

    package init(family: String, host: HostFiles, expectation: ProbeExpectation, route: DefaultGateway?, readFailure: String?) {
        self.family = family
        self.host = host
        self.expectation = expectation
        self.route = route
        self.readFailure = readFailure
    }

    private var isIPv6: Bool { family == "ipv6" }

    /// What one layer's check found.
    package struct Outcome {
        package var mark: LayerWalk.Mark
        package var detail: String
        /// The layer to blame when it is not the one checked (the HTTP check can find a portal).
        package var blame: Diagnosis?
        package static func ok(_ detail: String) -> Self { Self(mark: .ok, detail: detail) }
        package static func fail(_ detail: String, blame: Diagnosis? = nil) -> Self { Self(mark: .fail, detail: detail, blame: blame) }
        /// The check does not apply here: shown as not checked, never as a failure.
        package static func notApplicable(_ detail: String) -> Self { Self(mark: .skipped, detail: detail) }
        package static func judged(_ ok: Bool, _ good: String, _ bad: String) -> Self { ok ? .ok(good) : .fail(bad) }
    }

    package mutating func run() {
        let interface = route?.interface ?? Self.firstInterface(sys: host.sys) ?? ""
        let name = interface.isEmpty ? "no interface" : interface
        let flags = Self.flags(sys: host.sys, interface)
        let v6 = isIPv6
        // The checks below read these while `check` appends to `steps`.
        let host = self.host, route = self.route, readFailure = self.readFailure, url = self.expectation.url
        check(.link) {
            .judged(flags.map { $0 & 0x1 != 0 } == true, "\(name) is up", interface.isEmpty ? "no network interface" : "\(name) is down")
        }
        check(.carrier) {
            let carrier = (try? Files.readText(host.sys + "/class/net/\(interface)/carrier", limit: 16))?.trimmingSpaces() == "1"
            return .judged(carrier, "\(name) has a carrier", "\(name) has no carrier")
        }
        check(.address) {
            let addresses = Self.addresses(of: interface, ipv6: v6)
            return .judged(!addresses.isEmpty, addresses.joined(separator: ", "), "\(name) has no \(v6 ? "IPv6" : "IPv4") address")
        }
        check(.route) {
            guard let route else { return .fail(readFailure.map { "could not read the routing table: \($0)" } ?? "no default route") }
            return .ok(route.address.isEmpty ? "default dev \(name)" : "default via \(route.address) dev \(name)")
        }
        // Through a VPN the router worth asking is the one of the link that
        // carries the tunnel: the tunnel's rows stand in for the gateway's.
        if let tunnel = Self.tunnel(for: url, ipv6: v6, sys: host.sys) {
            tunnelRows(tunnel)
        } else {
            gatewayRow(route: route, name: name)
        }
        dnsAndAbove(interface: interface)
    }

    /// The tunnel's row (what WireGuard or the tunnel's counters say), then
    /// the link underneath (up, carrier) and its router's neighbour entry.
    /// Only read: nothing is sent outside the tunnel, not even to that router.
    private mutating func tunnelRows(_ tunnel: String) {
        let wireGuard = WireGuardState.read(tunnel)
        let counters = host.counters(of: tunnel)
        // An idle tunnel has nothing to show (WireGuard shakes hands only
        // when there is traffic): whether it passes anything is seen once the
        // checks above send into it.
        check(.tunnel) {
            if let wg = wireGuard {
                let shook = wg.lastHandshake == 0 ? "no handshake yet" : "last handshake \(Int64(time(nil)) - wg.lastHandshake) s ago"
                return .ok("\(tunnel) (WireGuard): \(shook); \(wg.rxBytes) bytes in, \(wg.txBytes) out")
            }
            return .ok(counters.map { "\(tunnel): \($0.rx) packets in, \($0.tx) out" } ?? tunnel)
        }
        let carrier = TunnelReader.carrier(of: tunnel, endpoint: wireGuard?.endpoint, mark: wireGuard?.fwmark ?? 0)
        check(.link) {
            guard let c = carrier else { return .notApplicable("the link under \(tunnel) is not known") }
            if !c.isUp { return .fail("\(c.interface) is down") }
            if !c.hasCarrier { return .fail("\(c.interface) has no carrier", blame: .carrier) }
            return .ok("\(c.interface) carries \(tunnel) (\(c.foundBy)): up, with a carrier")
        }
        check(.gateway) {
            guard let c = carrier, !c.router.isEmpty else { return .notApplicable("no router under \(tunnel) to look up") }
            switch c.routerAnswers {
            case true?: return .ok("\(c.interface)'s router \(c.router) answers")
            case false?: return .fail("\(c.interface) is connected but the router \(c.router) does not answer")
            case nil: return .notApplicable("\(c.interface) keeps no neighbour entry for \(c.router): not known whether it answers")
            }
        }
        // A tunnel that passed nothing while the checks above sent into it
        // is blamed once they fail.
        tunnelWatch = TunnelWatch(tunnel: tunnel, before: counters)
    }

    /// The interface the check server's packets leave by, when it is a tunnel.
    package static func tunnel(for url: String, ipv6: Bool, sys: String) -> String? {
        let target = FailedLayer.Target(url: url)
        let address = target.isAddress ? target.host : ipv6 ? "2001:db8::1" : "192.0.2.1"
        guard let hop = try? TunnelReader.route(to: address), TunnelReader.tunnelKind(hop.interface, sys: sys + "/class/net") != nil
        else { return nil }
        return hop.interface
    }

    private mutating func gatewayRow(route: DefaultGateway?, name: String) {
        let v6 = isIPv6
        check(.gateway) {
            guard let route else { return .fail("no default route") }
            guard !route.address.isEmpty else { return .notApplicable("\(name) is a point-to-point link: no router to ask") }
            let gateway = route.address
            switch Self.routerAnswers(route) {
            case .success(true?): return .ok("\(gateway) answers \(v6 ? "neighbour discovery" : "ARP")")
            case .success(false?): return .fail("\(name) is connected but the router \(gateway) does not answer")
            case .success(nil): return .notApplicable("\(name) keeps no neighbour entry for \(gateway): not known whether it answers")
            case .failure(let error): return .notApplicable("could not read the neighbour table: \(error)")
            }
        }
    }

    private mutating func dnsAndAbove(interface: String) {
        let v6 = isIPv6
        let host = self.host, expectation = self.expectation
        let timeout = expectation.timeout, url = expectation.url
        let target = FailedLayer.Target(url: url)
        var address: String?
        check(.dns) {
            if target.isAddress {
                address = target.host
                return .ok("\(target.host) needs no lookup")
            }
            let server = host.pathFacts(interface: interface).resolver
            let resolver = server.map { "DNS (\($0))" } ?? "DNS"
            guard let answer = Self.resolve(target.host, ipv6: v6, timeout: timeout) else {
                return .fail("The router answers but \(resolver) does not")
            }
            guard let found = answer else { return .fail("\(resolver) could not resolve \(target.host)") }
            if PlainHTTPLookup.isUnspecified(found) {
                let yours = server.map { "your DNS server (\($0))" } ?? "your DNS server"
                return .fail("\(yours) answers \(found) for \(target.host); a blocker?")
            }
            address = found
            return .ok("\(target.host) is \(found) (\(resolver))")
        }
        check(.tcp) {
            let endpoint = address.map { $0.contains(":") ? "[\($0)]:\(target.port)" : "\($0):\(target.port)" } ?? target.endpoint
            switch Self.connect(address ?? target.host, port: target.port, ipv6: v6, timeout: timeout) {
            case 0: return .ok("\(endpoint) accepts connections")
            case ETIMEDOUT: return .fail("TCP connect to \(endpoint) timed out after \(DurationText.format(timeout))")
            case ECONNREFUSED: return .fail("TCP connect to \(endpoint) was refused")
            case let e: return .fail("TCP connect to \(endpoint) failed: \(String(cString: strerror(e)))")
            }
        }
        check(.http) {
            let request = HTTPRequest(url: url, timeout: timeout, interface: "", family: v6 ? .ipv6 : .ipv4)
            let result = HTTPProber.fetchBlocking(request)
            switch expectation.judge(result, facts: host.pathFacts(interface: interface)) {
            case .pong(let rtt): return .ok("expected reply in \(Int(rtt.rounded())) ms")
            case .unexpected(let why, let layer): return .fail(why, blame: layer)
            case .failed(let why, let layer): return .fail(why, blame: layer)
            }
        }
    }

    /// Runs one layer's check, timed; not checked after an earlier failure.
    private mutating func check(_ layer: Diagnosis, _ body: () -> Outcome) {
        guard !failed else {
            steps.append(.init(family: family, layer: layer, mark: .skipped, detail: "not checked", milliseconds: 0))
            return
        }
        let start = ContinuousClock.now
        let outcome = body()
        let ms = (ContinuousClock.now - start).milliseconds
        steps.append(.init(family: family, layer: layer, mark: outcome.mark, detail: outcome.detail, milliseconds: ms))
        if outcome.mark == .fail {
            failed = true
            blamed = outcome.blame ?? layer
            sentence = outcome.detail
            blameTunnel(above: layer)
        }
    }

    /// A DNS, TCP or HTTP check that failed while the tunnel sent and received
    /// nothing since its row was read: the tunnel is what passes nothing.
    private mutating func blameTunnel(above layer: Diagnosis) {
        guard [.dns, .tcp, .http].contains(layer), let watch = tunnelWatch,
              let verdict = watch.finish(files: host).verdict, verdict.layer == .tunnel else { return }
        blamed = .tunnel
        sentence = verdict.sentence
    }

    package static func firstInterface(sys: String) -> String? {
        guard let dir = opendir(sys + "/class/net") else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix("."), name != "lo" { names.append(name) }
        }
        return names.sorted().first
    }

    package static func flags(sys: String, _ interface: String) -> UInt32? {
        guard !interface.isEmpty, !interface.contains("/"),
              let text = try? Files.readText(sys + "/class/net/\(interface)/flags", limit: 32) else { return nil }
        return UInt32(text.trimmingSpaces().dropFirst(2), radix: 16)
    }

    /// The interface's addresses of one family (IPv6 link-local left out: it reaches no router).
    package static func addresses(of interface: String, ipv6: Bool) -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var out: [String] = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr, String(cString: entry.pointee.ifa_name) == interface else { continue }
            let family = Int32(sa.pointee.sa_family)
            guard family == (ipv6 ? AF_INET6 : AF_INET), let text = numericHost(sa) else { continue }
            if ipv6, text.lowercased().hasPrefix("fe80:") { continue }
            out.append(text)
        }
        return out
    }

    package static func numericHost(_ sa: UnsafePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(sa.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard getnameinfo(sa, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether the router answers, from the kernel's neighbour table. When the
    /// entry does not say so yet (absent, INCOMPLETE, FAILED), nothing may have
    /// been sent to the router for a while and the kernel has not asked: one
    /// datagram to it (the discard port) makes the kernel ask, and the table is
    /// read again each time the kernel says a neighbour entry changed, until it
    /// answers or a second has passed. A router that answers does so within
    /// milliseconds, while the kernel waits a second before asking again, so a
    /// second bounds the wait without missing one.
    package static func routerAnswers(_ route: DefaultGateway) -> Result<Bool?, GatewayReader.Failure> {
        func look() -> Result<Bool?, GatewayReader.Failure> {
            Result { () throws(GatewayReader.Failure) in
                try GatewayReader.read(neighbours: true).gateways
                    .first { $0.family == route.family && $0.index == route.index && $0.address == route.address }?.answers
            }
        }
        let deadline = ContinuousClock.now + .seconds(1)
        var found = look()
        if case .success(true?) = found { return found }
        if case .failure = found { return found }
        // Subscribed before the nudge, so the answer it brings is never missed.
        guard let changes = try? NetlinkSocket(groups: LL_RTMGRP_NEIGH, nonBlocking: true) else { return found }
        nudge(route)
        var buffer = [UInt8](repeating: 0, count: 8192)
        while case let left = deadline - ContinuousClock.now, left > .zero {
            guard changes.waitReadable(timeoutMs: Int32(max(1, left.microseconds / 1000))) else { break }
            // What changed is read from the table; the events only say when to look.
            drain: while true {
                switch buffer.withUnsafeMutableBytes({ try? changes.receive(into: $0) }) {
                case .wouldBlock?, nil: break drain
                default: continue
                }
            }
            found = look()
            if case .success(true?) = found { return found }
        }
        // The kernel announces an answer, not the unanswered entry it made for
        // the nudge: the table as it stands at the end says what was asked.
        return look()
    }

    /// One empty datagram to the router's discard port: the kernel has to
    /// resolve its link-layer address first. A link-local IPv6 router is
    /// reached through the route's interface.
    package static func nudge(_ route: DefaultGateway) {
        let v6 = route.family == .ipv6
        guard let (address, length) = socketAddress(route.address, port: 9, ipv6: v6, scope: UInt32(bitPattern: route.index)) else { return }
        var storage = address
        let fd = socket(v6 ? AF_INET6 : AF_INET, SocketConstants.datagram | SocketConstants.closeOnExec, 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, "", 0, SocketConstants.dontWait, $0, length) }
        }
    }

    /// A numeric address and port as a socket address; `scope`: the interface
    /// index a link-local IPv6 address is reached through.
    package static func socketAddress(_ address: String, port: Int, ipv6: Bool, scope: UInt32 = 0) -> (sockaddr_storage, socklen_t)? {
        var storage = sockaddr_storage()
        if ipv6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = UInt16(port).bigEndian
            a.sin6_scope_id = scope
            guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { return nil }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { return nil }
        withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// The first address of `name`, looked up as the probe's own client does
    /// (`PlainHTTPLookup`), waited for at most `timeout`: glibc asks a silent
    /// resolver for 10 s (two tries of 5 s) whatever we want. Nil when no
    /// answer came in time; `.some(nil)` when the answer was "no such name"; a
    /// blocker's 0.0.0.0 or :: as it is. A lookup still running ends on its thread.
    package static func resolve(_ name: String, ipv6: Bool, timeout: Duration) -> String?? {
        switch PlainHTTPLookup.resolveWaiting(name, port: 80, family: ipv6 ? AF_INET6 : AF_INET, deadline: .now + timeout) {
        case .found(let addresses): .some(addresses.first.flatMap { $0.withSockaddr { address, _ in numericHost(address) } })
        case .blocked(let address): .some(address)
        case .failed: .some(nil)
        case .timedOut, .cancelled: nil
        }
    }

    /// A non-blocking connect bounded by `timeout`: 0 on success, else the errno.
    package static func connect(_ address: String, port: Int, ipv6: Bool, timeout: Duration) -> Int32 {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, SocketConstants.stream | SocketConstants.nonBlocking | SocketConstants.closeOnExec, 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        guard let (socketAddress, length) = socketAddress(address, port: port, ipv6: ipv6) else { return EINVAL }
        var storage = socketAddress
        let started = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        if started == 0 { return 0 }
        guard errno == EINPROGRESS else { return errno }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ms = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&p, 1, ms) == 1 else { return ETIMEDOUT }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        return error
    }
}
