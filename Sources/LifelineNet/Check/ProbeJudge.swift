import LifelineCore

/// What a probe found, before failure counting.
package enum ProbeOutcome: Sendable, Equatable {
    /// The expected reply.
    case pong(rttMs: Double)
    /// Something stood in for the check server: a redirect, a 2xx reply that
    /// is not the expected one, 511 (a captive portal or a proxy login).
    case unexpected(String, layer: Diagnosis = .portal)
    /// Nothing usable answered: timeout, refused, DNS failure, reset, or the
    /// server's own error status (`http`); `layer` is the one that failed first.
    case failed(String, layer: Diagnosis = .none)
}

/// What a check server must answer: the probe's `expect_*` settings.
public struct ExpectedReply: Sendable, Equatable {
    /// Nil: any 2xx when a body prefix or header is expected, else 204.
    public var status: Int?
    public var bodyPrefix: String
    /// "Name: value", or empty.
    public var header: String

    public init(status: Int?, bodyPrefix: String, header: String) {
        self.status = status
        self.bodyPrefix = bodyPrefix
        self.header = header
    }
}

/// The expected reply of one URL and how a reply is judged against it.
package struct ProbeExpectation: Sendable, Equatable {
    package var url: String
    /// Nil: any 2xx when a body prefix or header is expected, else 204.
    package var status: Int?
    package var bodyPrefix: String
    /// "Name: value", or empty.
    package var header: String
    package var timeout: Duration

    /// The status wanted when `status` is not given: a body or header check
    /// needs a real answer (2xx); with neither, the reply is all there is, so
    /// we expect the generate_204 convention (a portal answers 200 with its page).
    package var statusText: String {
        if let status { return "\(status)" }
        return bodyPrefix.isEmpty && header.isEmpty ? "204" : "2xx"
    }

    package func statusMatches(_ code: Int) -> Bool {
        if let status { return code == status }
        return bodyPrefix.isEmpty && header.isEmpty ? code == 204 : (200...299).contains(code)
    }

    /// `facts`: what is known of the path, to name the layer of a failure.
    package func judge(_ result: Result<HTTPReply, HTTPFailure>, facts: PathFacts = PathFacts()) -> ProbeOutcome {
        switch result {
        case .failure(let error):
            let (layer, sentence) = FailedLayer.explain(error, timeout: timeout, facts: facts)
            return .failed(sentence, layer: layer)
        case .success(let reply):
            guard let mismatch = mismatch(reply) else { return .pong(rttMs: reply.rttMs) }
            // A server in trouble answers 5xx; a portal intercepts with a
            // redirect or a page of its own. An error status is therefore that
            // check server's failure, never a sign-in page on its own.
            return Self.layer(ofUnexpected: reply) == .portal ? .unexpected(mismatch) : .failed(mismatch, layer: .http)
        }
    }

    /// A redirect, a page where none was expected, or 511 is a portal standing
    /// in for the internet; any other status (404, 500…) is the check server's
    /// own trouble.
    package static func layer(ofUnexpected reply: HTTPReply) -> Diagnosis {
        switch reply.status {
        case 200...399, 511: .portal
        default: .http
        }
    }

    /// Why `reply` is not the expected one, or nil when it is.
    package func mismatch(_ reply: HTTPReply) -> String? {
        if (300...399).contains(reply.status), status != reply.status {
            let target = reply.redirect ?? reply.header(named: "Location") ?? ""
            return target.isEmpty
                ? "probe to \(url) was redirected (HTTP \(reply.status)) without a target"
                : "probe to \(url) was redirected to \(Self.clean(target)) (HTTP \(reply.status))"
        }
        if !statusMatches(reply.status) {
            return "probe to \(url) got HTTP \(reply.status), expected \(statusText)"
        }
        if !header.isEmpty {
            let (name, value) = Self.split(header: header)
            guard let got = reply.header(named: name) else {
                return "probe to \(url) got no \(name) header"
            }
            if got.lowercased() != value.lowercased() {
                return "probe to \(url) got \(name): \(Self.clean(got)), expected \(value)"
            }
        }
        if !bodyPrefix.isEmpty, !reply.body.starts(with: Array(bodyPrefix.utf8)) {
            let start = Self.clean(String(decoding: reply.body.prefix(40), as: UTF8.self))
            return start.isEmpty
                ? "probe to \(url) got HTTP \(reply.status) with an empty body, expected '\(bodyPrefix)'"
                : "probe to \(url) got HTTP \(reply.status) with a body starting '\(start)', expected '\(bodyPrefix)'"
        }
        return nil
    }

    package static func split(header: String) -> (name: String, value: String) {
        guard let colon = header.firstIndex(of: ":") else { return (String(header.trimmingSpaces()), "") }
        return (String(header[..<colon].trimmingSpaces()), String(header[header.index(after: colon)...].trimmingSpaces()))
    }

    /// Text from the network goes into a one-line reason: no control characters,
    /// bounded length.
    package static func clean(_ text: String, limit: Int = 200) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if out.unicodeScalars.count >= limit {
                out += "…"
                break
            }
            out.unicodeScalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        return String(out.trimmingSpaces())
    }
}

extension ProbeExpectation {
    /// In an extension, so that the struct keeps its memberwise initializer.
    package init(url: String, reply: ExpectedReply, timeout: Duration) {
        self.init(url: url, status: reply.status, bodyPrefix: reply.bodyPrefix, header: reply.header, timeout: timeout)
    }
}

/// Turns probe outcomes into observations: answers count at once, failures only
/// after `failures` in a row (a lost packet is not an outage). A stall the
/// monitor saw itself (packets leaving, none arriving) counts as one failure:
/// it is the user's own ping going unanswered. Everything it knows belongs to
/// one path: on a new path it starts counting again and repeats no old verdict.
package struct ProbeJudge: Sendable {
    package let failures: Int
    package private(set) var consecutiveFailures = 0
    /// The last verdict on this path, repeated while a failure is unconfirmed.
    package private(set) var lastPublished: Observation?
    /// The path generation the counts belong to.
    package private(set) var path: UInt64?

    package init(failures: Int) {
        self.failures = max(1, failures)
    }

    /// The observation to publish for `outcome`, measured on path `path`. An
    /// unconfirmed failure repeats the last verdict on this path, or says
    /// `unknown` when there is none yet, so that a check waiting for the probe
    /// gets an answer and a stale verdict never stands in for a fresh one.
    package mutating func record(_ outcome: ProbeOutcome, interface: String, path: UInt64, afterStall stall: String?) -> Observation {
        if path != self.path {
            self.path = path
            consecutiveFailures = 0
            lastPublished = nil
        }
        let observation: Observation
        switch outcome {
        case .pong(let rtt):
            consecutiveFailures = 0
            // The same answer a few ms sooner or later is not news: repeating the
            // published verdict publishes nothing (no state file, D-Bus signal or
            // `watch` line every probe round).
            if let last = lastPublished, last.state == .online, let shown = last.rttMs,
               !Self.roundTripIsNews(rtt, after: shown) {
                return last
            }
            let ms = rtt < 10 ? (rtt * 10).rounded() / 10 : rtt.rounded()
            observation = Observation(role: .reachability, state: .online, interface: interface,
                                      reason: "probe answered in \(Self.format(ms)) ms", rttMs: rtt)
        case .unexpected(let reason, let layer):
            consecutiveFailures = 0
            observation = Observation(role: .reachability, state: .portal, interface: interface, reason: reason)
                .diagnosed(layer)
        case .failed(let reason, let layer):
            consecutiveFailures += stall == nil ? 1 : 2
            let why = stall.map { "\(reason) (\($0))" } ?? reason
            if consecutiveFailures >= failures {
                observation = Observation(role: .reachability, state: .limited, interface: interface, reason: why)
                    .diagnosed(layer)
            } else {
                return lastPublished
                    ?? Observation(role: .reachability, state: .unknown, interface: interface, reason: why)
            }
        }
        lastPublished = observation
        return observation
    }

    /// Per family ("ipv4", "ipv6"): failures in a row, and the last failure's sentence.
    private var familyFailures: [String: (count: Int, sentence: String)] = [:]
    package private(set) var families = FamilyStates()

    /// One probe per family, side by side (`"any"` when the families were not
    /// told apart). The state is the best family's: any expected reply is
    /// `online`, and a family that fails while another answers is named in the
    /// reason and marked in `families` (after `failures` in a row, as a whole
    /// verdict is), never an outage of its own.
    package mutating func record(families outcomes: [(family: String, outcome: ProbeOutcome)], interface: String, path: UInt64,
                         afterStall stall: String?) -> Observation {
        let best = outcomes.first { Self.isOnline($0.outcome) }
            ?? outcomes.first { if case .unexpected = $0.outcome { true } else { false } }
            ?? outcomes.first
        guard let best else { return Observation(role: .reachability, state: .unknown, interface: interface) }
        var observation = record(best.outcome, interface: interface, path: path, afterStall: stall)
        if path != familyPath {
            familyPath = path
            familyFailures = [:]
            families = FamilyStates()
        }
        for (family, outcome) in outcomes where family != "any" {
            switch outcome {
            case .pong:
                familyFailures[family] = nil
                families.set(family, .online)
            case .unexpected:
                familyFailures[family] = nil
                families.set(family, .portal)
            case .failed(let sentence, _):
                let count = (familyFailures[family]?.count ?? 0) + (stall == nil ? 1 : 2)
                familyFailures[family] = (count, sentence)
                if count >= failures { families.set(family, .limited) }
            }
        }
        observation.families = families
        if observation.state == .online {
            let broken = families.entries.filter { $0.state != .online }
            if let first = broken.first, let why = familyFailures[first.family]?.sentence {
                let names = broken.map { $0.family == "ipv4" ? "IPv4" : "IPv6" }.joined(separator: " and ")
                observation.reason = "\(names) broken: \(why); \(observation.reason)"
            }
        }
        return observation
    }

    private var familyPath: UInt64?

    /// Whether the last outcome was the expected reply (for scheduling).
    package static func isOnline(_ outcome: ProbeOutcome) -> Bool {
        if case .pong = outcome { return true }
        return false
    }

    /// Whether a round trip of `rtt` ms tells a user more than the `shown` one:
    /// half as fast or 1.5 times as slow, and 20 ms or more apart (38 → 60 ms
    /// is, 38 → 45 ms or 4 → 9 ms is not).
    package static func roundTripIsNews(_ rtt: Double, after shown: Double) -> Bool {
        abs(rtt - shown) >= 20 && (rtt >= shown * 1.5 || rtt * 1.5 <= shown)
    }

    private static func format(_ ms: Double) -> String {
        ms == ms.rounded() ? "\(Int(ms))" : "\(ms)"
    }
}

extension Observation {
    package func diagnosed(_ layer: Diagnosis) -> Observation {
        var o = self
        o.diagnosis = layer
        return o
    }
}
