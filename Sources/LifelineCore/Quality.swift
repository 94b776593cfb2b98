/// How well the connection works while it is `online`: an attribute of the
/// state, never a state of its own (no transition, no outage).
public enum QualityLevel: String, Sendable, Equatable, CaseIterable, Codable {
    case good, degraded, poor
}

/// The quality attribute and the numbers behind it, as every surface shows it.
public struct Quality: Sendable, Equatable {
    public var level: QualityLevel
    /// Median smoothed round-trip time of the user's active TCP connections, ms; nil when none was measured.
    public var rttMs: Double?
    /// Share of the segments sent that were retransmissions (0…1), over the
    /// estimator's window; nil while too few segments were sent to tell.
    public var retransmitShare: Double?
    /// Connections and distinct remote addresses the numbers come from.
    public var connections: Int
    public var remotes: Int
    /// DNS failures and timeouts the probe saw in the window.
    public var dnsFailures: Int
    /// The probe's own last round trip, ms.
    public var probeRttMs: Double?
    /// One short sentence: which number decided.
    public var reason: String

    public init(level: QualityLevel, rttMs: Double? = nil, retransmitShare: Double? = nil, connections: Int = 0,
                remotes: Int = 0, dnsFailures: Int = 0, probeRttMs: Double? = nil, reason: String = "") {
        self.level = level
        self.rttMs = rttMs
        self.retransmitShare = retransmitShare
        self.connections = connections
        self.remotes = remotes
        self.dnsFailures = dnsFailures
        self.probeRttMs = probeRttMs
        self.reason = reason
    }
}
