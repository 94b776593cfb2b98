import LifelineCore

/// The quality attribute in an event's JSON: `"quality":"good"` and
/// `"quality_details":{…}` with the numbers behind it, written only while a
/// quality is known (online with traffic seen), so every other line stays as
/// it always was.
extension JSONText {
    public static func qualityFields(_ q: Quality) -> [(String, String)] {
        [("quality", quote(q.level.rawValue)), ("quality_details", qualityDetails(q))]
    }

    /// `{"rtt_ms":31,"retransmit_share":0.004,…}`; an unknown number is -1.
    public static func qualityDetails(_ q: Quality) -> String {
        let fields: [(String, String)] = [
            ("rtt_ms", number(q.rttMs.map { ($0 * 10).rounded() / 10 } ?? -1)),
            ("retransmit_share", number(q.retransmitShare.map { ($0 * 10000).rounded() / 10000 } ?? -1)),
            ("connections", String(q.connections)),
            ("remotes", String(q.remotes)),
            ("dns_failures", String(q.dnsFailures)),
            ("probe_rtt_ms", number(q.probeRttMs.map { ($0 * 10).rounded() / 10 } ?? -1)),
            ("reason", quote(q.reason)),
        ]
        return "{" + fields.map { quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}

extension Quality {
    /// Reads `quality_details` back (a file another program may have written:
    /// every number is checked); nil when it is not such an object.
    public static func parse(level: QualityLevel, details: [UInt8]) -> Quality? {
        var q = Quality(level: level)
        var valid = true
        func measure(_ v: FlatJSON.Value, in range: ClosedRange<Double>) -> Double? {
            guard let d = v.double, d.isFinite, d == -1 || range.contains(d) else {
                valid = false
                return nil
            }
            return d < 0 ? nil : d
        }
        func count(_ v: FlatJSON.Value) -> Int {
            guard let n = v.int64, (0...1_000_000).contains(n) else {
                valid = false
                return 0
            }
            return Int(n)
        }
        let wellFormed = FlatJSON.forEachMember(details) { key, value in
            switch (key, value) {
            case ("rtt_ms", _): q.rttMs = measure(value, in: 0...86_400_000)
            case ("retransmit_share", _): q.retransmitShare = measure(value, in: 0...1)
            case ("connections", _): q.connections = count(value)
            case ("remotes", _): q.remotes = count(value)
            case ("dns_failures", _): q.dnsFailures = count(value)
            case ("probe_rtt_ms", _): q.probeRttMs = measure(value, in: 0...86_400_000)
            case ("reason", .string(let s)): q.reason = String(s.prefix(200))
            default: break
            }
        }
        return wellFormed && valid ? q : nil
    }

    /// One line for a tooltip: "quality degraded: 31 ms, 2.1 % retransmitted".
    public var summary: String {
        let numbers = numbersText
        return "quality \(level.rawValue)" + (numbers.isEmpty ? "" : ": " + numbers)
    }

    /// The details as text for a person: "31 ms, 0.4 % retransmitted".
    public var numbersText: String {
        var parts: [String] = []
        if let rttMs { parts.append("\(Int(rttMs.rounded())) ms") }
        if let retransmitShare {
            let tenths = Int((retransmitShare * 1000).rounded())
            parts.append("\(tenths / 10).\(tenths % 10) % retransmitted")
        }
        if dnsFailures > 0 { parts.append("\(dnsFailures) DNS failures") }
        return parts.joined(separator: ", ")
    }
}
