import LifelineCore

/// The probe's check URLs: `url = "http://…"` or `url = ["http://…", "http://…"]`.
/// Written back as one string when there is one, so a config that names one
/// URL prints as it was written.
public struct ProbeURLs: Codable, Sendable, Equatable, ExpressibleByArrayLiteral, ExpressibleByStringLiteral {
    public var list: [String]

    public init(_ list: [String]) { self.list = list }
    public init(arrayLiteral elements: String...) { list = elements }
    public init(stringLiteral value: String) { list = [value] }

    /// The first endpoint: the one the sign-in page opens, and the one
    /// `lifeline diagnose` walks layer by layer.
    public var first: String { list.first ?? "" }

    public init(from decoder: any Decoder) throws {
        if var items = try? decoder.unkeyedContainer() {
            var list: [String] = []
            while !items.isAtEnd { list.append(try items.decode(String.self)) }
            self.list = list
        } else {
            list = [try decoder.singleValueContainer().decode(String.self)]
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if list.count == 1 {
            var c = encoder.singleValueContainer()
            try c.encode(list[0])
        } else {
            var c = encoder.unkeyedContainer()
            for url in list { try c.encode(url) }
        }
    }
}

/// One round of the probe over one family: the endpoints asked one after
/// another until one answers as expected, and how the round comes out.
///
/// A check server's own trouble (no answer, refused, reset, a name that does
/// not resolve or that the resolver blocks, an HTTP error status) is that
/// server's failure: the next endpoint is asked at once, and the round fails
/// only when every endpoint failed. An interception (a redirect, a 2xx reply
/// that is not the expected one) is a portal only when no endpoint answered
/// as expected: some networks pass one check host and intercept another.
package struct ProbeRound: Sendable, Equatable {
    /// Each endpoint asked, in the order asked, with what it got.
    package var verdicts: [(url: String, outcome: ProbeOutcome)]

    package init(verdicts: [(url: String, outcome: ProbeOutcome)] = []) {
        self.verdicts = verdicts
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.verdicts.count == b.verdicts.count && zip(a.verdicts, b.verdicts).allSatisfy { $0.url == $1.url && $0.outcome == $1.outcome }
    }

    /// Whether another endpoint must be asked after `outcome`: anything but
    /// the expected reply leaves the round open.
    package static func asksOn(after outcome: ProbeOutcome) -> Bool { !ProbeJudge.isOnline(outcome) }

    /// The order to ask `count` endpoints in: the last one that answered
    /// first, so a round costs one request while it keeps answering, then the
    /// others in the configured order.
    package static func order(count: Int, preferred: Int) -> [Int] {
        guard count > 0 else { return [] }
        let first = (0..<count).contains(preferred) ? preferred : 0
        return [first] + (0..<count).filter { $0 != first }
    }

    /// The index (in the configured list) of the endpoint that answered as expected.
    package func answered(in urls: [String]) -> Int? {
        guard let hit = verdicts.first(where: { ProbeJudge.isOnline($0.outcome) }) else { return nil }
        return urls.firstIndex(of: hit.url)
    }

    /// Whether the round's outcome is an interception (a portal).
    package var isIntercepted: Bool {
        if case .unexpected = outcome { true } else { false }
    }

    /// The index (in the configured list) of the endpoint whose interception
    /// is the round's outcome; nil when the round is no portal.
    package func intercepted(in urls: [String]) -> Int? {
        guard isIntercepted, let hit = verdicts.first(where: { if case .unexpected = $0.outcome { true } else { false } })
        else { return nil }
        return urls.firstIndex(of: hit.url)
    }

    /// The round's outcome: the expected reply if any endpoint gave it; else
    /// the first interception; else a failure naming every endpoint's.
    package var outcome: ProbeOutcome {
        if let pong = verdicts.first(where: { ProbeJudge.isOnline($0.outcome) }) { return pong.outcome }
        if let portal = verdicts.first(where: { if case .unexpected = $0.outcome { true } else { false } }) {
            return portal.outcome
        }
        let failures: [(String, Diagnosis)] = verdicts.compactMap {
            if case .failed(let sentence, let layer) = $0.outcome { (sentence, layer) } else { nil }
        }
        guard let first = failures.first else { return .failed("no check URL", layer: .none) }
        // Every endpoint failed the same way (one proxy or one dark uplink for
        // all): one sentence says it; otherwise each one's is named.
        var sentences: [String] = []
        for (sentence, _) in failures where !sentences.contains(sentence) { sentences.append(sentence) }
        return .failed(Self.condensed(sentences).joined(separator: "; "), layer: Self.lowestLayer(failures.map(\.1)) ?? first.1)
    }

    /// One resolver that resolves none of the names is one sentence: "DNS
    /// (10.0.0.1) could not resolve a, b and c", not the same words three times.
    package static func condensed(_ sentences: [String]) -> [String] {
        let marker = " could not resolve "
        var out: [String] = []
        var hosts: [String: [String]] = [:]
        for sentence in sentences {
            guard let range = sentence.firstRange(of: marker) else { out.append(sentence); continue }
            let who = String(sentence[..<range.lowerBound]), host = String(sentence[range.upperBound...])
            if host.contains(" ") { out.append(sentence); continue }  // it says more than a name
            if hosts[who] == nil { out.append(who + marker) }
            hosts[who, default: []].append(host)
        }
        return out.map { line in
            guard line.hasSuffix(marker), let names = hosts[String(line.dropLast(marker.count))] else { return line }
            let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
            return line + list
        }
    }

    /// The layer to name for a round whose every endpoint failed: the lowest
    /// one (a dead uplink before one server's error status), as the whole
    /// round failed through it.
    package static func lowestLayer(_ layers: [Diagnosis]) -> Diagnosis? {
        let order: [Diagnosis] = [.link, .carrier, .address, .route, .gateway, .dns, .tcp, .tls, .http, .portal, .none]
        return layers.min { (order.firstIndex(of: $0) ?? order.count) < (order.firstIndex(of: $1) ?? order.count) }
    }
}

/// The page "Open sign-in page" opens: the first endpoint over plain http://,
/// which a captive portal intercepts and answers with its sign-in page (it
/// cannot answer for an https:// URL without a certificate warning). Always
/// one of the configured URLs, never one a reply named: a portal's
/// `Location` is shown as text and never opened.
package enum SignInPage {
    package static func url(for urls: [String]) -> String? {
        if let plain = urls.first(where: { $0.lowercased().hasPrefix("http://") }) { return plain }
        guard let first = urls.first, first.lowercased().hasPrefix("https://") else { return nil }
        return "http://" + first.dropFirst("https://".count)
    }
}
