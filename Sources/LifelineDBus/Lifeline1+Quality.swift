import LifelineCore

/// The quality part of `org.lifeline.Lifeline1`: how well the connection
/// works while it is online, from the user's own traffic.
///
/// - property `Quality` s: `good`, `degraded`, `poor`, or "" while unknown;
/// - property `QualityDetails` a{sv}: the numbers behind it (`rtt_ms` d,
///   `retransmit_share` d, `connections` u, `remotes` u, `dns_failures` u,
///   `probe_rtt_ms` d, `reason` s; an unknown number is -1), empty while unknown.
///
/// Both change with `PropertiesChanged` only; a quality change is never a
/// `StateChanged`. The event's details carry them as `quality` and `quality_details`.
extension Lifeline1 {
    public static let qualitySignatures: [(name: String, signature: String)] = [("Quality", "s"), ("QualityDetails", "a{sv}")]

    public static func qualityProperties(_ q: Quality?) -> [(String, BusValue)] {
        [("Quality", .string(q?.level.rawValue ?? "")), ("QualityDetails", .vardict(q.map(qualityDetails) ?? []))]
    }

    public static func qualityDetails(_ q: Quality) -> [(String, BusValue)] {
        [
            ("rtt_ms", .double(q.rttMs ?? -1)),
            ("retransmit_share", .double(q.retransmitShare ?? -1)),
            ("connections", .uint32(UInt32(clamping: q.connections))),
            ("remotes", .uint32(UInt32(clamping: q.remotes))),
            ("dns_failures", .uint32(UInt32(clamping: q.dnsFailures))),
            ("probe_rtt_ms", .double(q.probeRttMs ?? -1)),
            ("reason", .string(q.reason)),
        ]
    }

    /// `quality` and `quality_details` for an event's details, only while known.
    static func qualityFields(_ e: StateEvent) -> [(String, BusValue)] {
        guard let q = e.quality else { return [] }
        return [("quality", .string(q.level.rawValue)), ("quality_details", .vardict(qualityDetails(q)))]
    }

    /// The quality a details map carries; nil when absent or not a known level.
    static func quality(level: BusValue?, details: BusValue?) -> Quality? {
        guard let level = level?.string.flatMap(QualityLevel.init(rawValue:)) else { return nil }
        var q = Quality(level: level)
        var fields: [String: BusValue] = [:]
        for (k, v) in details?.vardictEntries ?? [] { fields[k] = v }
        func measure(_ key: String) -> Double? {
            guard let d = fields[key]?.double, d.isFinite, d >= 0 else { return nil }
            return d
        }
        q.rttMs = measure("rtt_ms")
        q.retransmitShare = measure("retransmit_share").map { min($0, 1) }
        q.connections = Int(fields["connections"]?.uint32 ?? 0)
        q.remotes = Int(fields["remotes"]?.uint32 ?? 0)
        q.dnsFailures = Int(fields["dns_failures"]?.uint32 ?? 0)
        q.probeRttMs = measure("probe_rtt_ms")
        q.reason = fields["reason"]?.string ?? ""
        return q
    }
}
