import LifelineCore

/// What the probe can learn about the path when a probe fails, to say which
/// layer failed: the resolver it asked and whether the default gateway answers
/// ARP or neighbour discovery (the kernel's neighbour table). Nil where unknown.
package struct PathFacts: Sendable, Equatable {
    package var interface: String
    /// The first `nameserver` of resolv.conf.
    package var resolver: String?
    /// The default gateway of the probe's family on `interface`.
    package var gateway: String?
    /// True when the kernel has a link-layer address for the gateway, false
    /// when resolving it is failing (INCOMPLETE or FAILED), nil when it has no entry.
    package var gatewayAnswers: Bool?
    /// The proxy the request went through ("10.0.0.5:3128"), nil when it went direct.
    package var proxy: String?
    /// The VPN tunnel the probe went through, and the link underneath it.
    package var tunnel: TunnelFacts?

    package init(
        interface: String = "", resolver: String? = nil, gateway: String? = nil, gatewayAnswers: Bool? = nil,
        proxy: String? = nil, tunnel: TunnelFacts? = nil
    ) {
        self.interface = interface
        self.resolver = resolver
        self.gateway = gateway
        self.gatewayAnswers = gatewayAnswers
        self.proxy = proxy
        self.tunnel = tunnel
    }
}

/// Turns a failed probe into the layer that failed first and one sentence a
/// person can act on: "wlan0 is connected but the router 192.168.1.1 does not
/// answer", "The router answers but DNS (192.168.1.1) does not".
package enum FailedLayer {
    package static func explain(_ error: HTTPFailure, timeout: Duration, facts: PathFacts) -> (layer: Diagnosis, sentence: String) {
        let target = Target(url: error.url)
        let after = DurationText.format(timeout)
        let message = ProbeExpectation.clean(error.message)
        var stage = error.stage
        if stage == .resolving, target.isAddress { stage = .connecting }  // nothing to look up

        // Below DNS and TCP lies the router: when the kernel cannot reach it,
        // that is the reason, whatever timed out above it.
        let belowRouter = error.kind == .unreachable || error.kind == .dns
            || (error.kind == .timeout && stage <= .connecting)
        // Through a VPN, the tunnel and the link that carries it lie below
        // the router: a tunnel that passes nothing, or its link's router
        // silent, is what to fix.
        if belowRouter, let verdict = facts.tunnel?.verdict { return verdict }
        if belowRouter, facts.gatewayAnswers == false, let gateway = facts.gateway {
            let who = facts.interface.isEmpty ? "The network" : facts.interface
            return (.gateway, "\(who) is connected but the router \(gateway) does not answer")
        }
        let dns = facts.resolver.map { "DNS (\($0))" } ?? "DNS"
        // Through a proxy, the connection the probe makes is the proxy's: a
        // failure to reach it is the proxy's, not the check server's.
        if let proxy = facts.proxy, let sentence = proxyFailure(error, stage: stage, proxy: proxy, after: after, message: message) {
            return sentence
        }
        switch (error.kind, stage) {
        case (.cancelled, _):
            return (.none, "probe to \(error.url) was cancelled")
        case (.blocked, _):
            // A DNS blocker (Pi-hole, AdGuard) answers a listed name with the
            // unspecified address instead of saying it does not exist.
            let server = facts.resolver.map { "your DNS server (\($0))" } ?? "your DNS server"
            return (.dns, "\(server) answers \(message) for \(target.host); a blocker?")
        case (.dns, _):
            // libcurl's own words ("Could not resolve host: x") would say it twice.
            let detail = message.hasPrefix("Could not resolve host") ? "" : ": \(message)"
            return (.dns, "\(dns) could not resolve \(target.host)\(detail)")
        case (.timeout, .resolving):
            return (.dns, facts.gatewayAnswers == true
                ? "The router answers but \(dns) does not"
                : "\(dns) did not answer for \(target.host) within \(after)")
        case (.refused, _):
            return (.tcp, "TCP connect to \(target.endpoint) was refused")
        case (.unreachable, _):
            return (.tcp, "TCP connect to \(target.endpoint) failed: \(message)")
        case (.timeout, .connecting):
            return (.tcp, "TCP connect to \(target.endpoint) timed out after \(after)")
        case (.tls, _), (.timeout, .handshaking):
            return (.tls, error.kind == .timeout
                ? "TLS handshake with \(target.host) timed out after \(after)"
                : "TLS handshake with \(target.host) failed: \(message)")
        case (.timeout, .exchanging):
            return (.http, "\(target.endpoint) accepted the connection but sent no HTTP reply within \(after)")
        case (.noReply, _):
            return (.http, "\(target.endpoint) sent no usable HTTP reply: \(message)")
        case (.other, _):
            let layer: Diagnosis = switch stage {
            case .resolving: .dns
            case .connecting: .tcp
            case .handshaking: .tls
            case .exchanging: .http
            }
            return (layer, "probe to \(error.url) failed: \(message)")
        }
    }

    /// The sentence for a failure to reach the proxy, nil when the proxy was
    /// reached (what went wrong after that is told as without one).
    package static func proxyFailure(_ error: HTTPFailure, stage: HTTPFailure.Stage, proxy: String, after: String,
                             message: String) -> (layer: Diagnosis, sentence: String)? {
        switch (error.kind, stage) {
        case (.dns, _) where error.code == HTTPFailure.couldNotResolveProxy:
            return (.dns, "could not resolve the proxy \(proxy): \(message)")
        case (.refused, _):
            return (.tcp, "TCP connect to the proxy \(proxy) was refused")
        case (.unreachable, _):
            return (.tcp, "TCP connect to the proxy \(proxy) failed: \(message)")
        case (.timeout, .resolving), (.timeout, .connecting):
            return (.tcp, "TCP connect to the proxy \(proxy) timed out after \(after)")
        default:
            return nil
        }
    }

    /// The probe URL's host and port, as the sentences name them.
    package struct Target: Equatable {
        package var host: String
        package var port: Int
        /// The host is an address literal: no name lookup happens.
        package var isAddress: Bool

        package init(url: String) {
            let lower = url.lowercased()
            let https = lower.hasPrefix("https:")
            var rest = Substring(url)
            if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
                rest = rest[rest.index(colon, offsetBy: 3)...]
            }
            rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
            var host = rest
            var port = https ? 443 : 80
            if rest.hasPrefix("[") {
                let close = rest.firstIndex(of: "]") ?? rest.endIndex
                host = rest[rest.index(after: rest.startIndex)..<close]
                if close < rest.endIndex, let p = Int(rest[rest.index(after: close)...].dropFirst()) { port = p }
            } else if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                if let p = Int(rest[rest.index(after: colon)...]) { port = p }
            }
            self.host = String(host)
            self.port = port
            isAddress = host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
        }

        /// "10.0.0.1:80", "[2001:db8::1]:443", "nmcheck.gnome.org:80".
        package var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }
}
