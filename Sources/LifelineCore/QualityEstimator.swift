/// One TCP connection at one sample, as the kernel counts it (`tcp_info`).
public struct FlowSample: Sendable, Equatable {
    /// The kernel's identity of the socket, the same in every sample.
    public var id: UInt64
    /// The remote address's bytes: connections to one server count as one remote.
    public var remote: [UInt8]
    /// Smoothed round-trip time, µs.
    public var rttMicros: UInt32
    /// Lifetime totals: retransmitted segments, segments sent, segments received.
    public var retransmits: UInt32
    public var segmentsOut: UInt32
    public var segmentsIn: UInt32
    /// The lowest RTT the kernel saw on it, µs; 0 when unknown.
    public var minRttMicros: UInt32 = 0

    public init(id: UInt64, remote: [UInt8], rttMicros: UInt32, retransmits: UInt32, segmentsOut: UInt32,
                segmentsIn: UInt32) {
        self.id = id
        self.remote = remote
        self.rttMicros = rttMicros
        self.retransmits = retransmits
        self.segmentsOut = segmentsOut
        self.segmentsIn = segmentsIn
    }
}

/// Turns samples of the user's own TCP connections, and what the probe sees,
/// into a `Quality`. Pure: samples and moments in, a value out; the caller
/// samples only while traffic flows.
///
/// What it guards against (each has a unit test):
/// - Retransmissions are counted per sample (deltas of the kernel's lifetime
///   totals), over the last `window`, never as lifetime totals.
/// - A flow's first segments are left out: a new flow's slow start overshoots
///   a bottleneck and loses a few segments by design. A flow counts once it
///   had sent `warmSegments` before the sample (a few round trips' worth).
/// - Losses that come with a full queue are the user's own congestion, not
///   the path's: a flow whose smoothed RTT stands far above its lowest
///   (`queued`) is filling a bottleneck's buffer, and a full buffer drops
///   the excess by design (a bulk transfer saturating the link). Its
///   retransmissions are left out; the RTT it causes still counts.
/// - One bad server is not the network: the share leaves out the remote
///   address with the worst share, and the RTT is the lower median of the
///   remotes' medians. Both need traffic to `minRemotes` remotes or more;
///   with fewer, the flows say nothing.
/// - Dedup and debounce: a new level must hold for `hold` before it is
///   published; the numbers behind a level that holds are refreshed at most
///   once per `refresh`.
public struct QualityEstimator: Sendable {
    public struct Thresholds: Sendable, Equatable {
        public var degradedRttMs = 300.0
        public var poorRttMs = 1000.0
        public var degradedShare = 0.01
        public var poorShare = 0.05
        /// Probe round trips this slow mean `degraded` on their own.
        public var degradedProbeRttMs = 1000.0
        /// DNS failures in the window: one is `degraded`, this many `poor`.
        public var poorDNSFailures = 3
        public init() {}
    }

    public var thresholds = Thresholds()
    public var window: Duration = .seconds(30)
    public var hold: Duration = .seconds(10)
    public var refresh: Duration = .seconds(300)
    public var warmSegments: UInt32 = 30
    /// Segments sent in the window (outside the worst remote) before a share means anything.
    public var minSegments: UInt64 = 100
    public var minRemotes = 2

    /// Whether a flow is queued behind its own traffic at a bottleneck: its
    /// smoothed RTT more than twice its lowest plus 5 ms (a path's own jitter
    /// and a Wi-Fi's retries stay below that; a filled buffer does not).
    static func queued(_ flow: FlowSample) -> Bool {
        flow.minRttMicros > 0 && UInt64(flow.rttMicros) > 2 * UInt64(flow.minRttMicros) + 5000
    }

    private struct Totals {
        var retransmits: UInt32
        var segmentsOut: UInt32
        var segmentsIn: UInt32
    }

    private struct Delta {
        var at: Moment
        var remote: [UInt8]
        var retransmits: UInt64
        var segments: UInt64
    }

    private var last: [UInt64: Totals] = [:]
    private var deltas: [Delta] = []
    private var dnsFailures: [Moment] = []
    private var probeRttMs: Double?
    private var rttMs: Double?
    private var connections = 0
    private var remotes = 0
    private var candidate: (level: QualityLevel, since: Moment)?
    private var publishedAt: Moment?
    public private(set) var published: Quality?

    public init() {}

    /// Forgets everything (the path changed: its numbers say nothing of the new one).
    public mutating func reset() {
        self = Self(settings: self)
    }

    private init(settings other: Self) {
        thresholds = other.thresholds
        window = other.window
        hold = other.hold
        refresh = other.refresh
        warmSegments = other.warmSegments
        minSegments = other.minSegments
        minRemotes = other.minRemotes
    }

    /// One sample of the connections through the primary interface. Returns
    /// the quality to publish when it changed, nil otherwise.
    public mutating func sample(_ flows: [FlowSample], at now: Moment) -> Quality? {
        var next: [UInt64: Totals] = [:]
        next.reserveCapacity(flows.count)
        var activeRtt: [[UInt8]: [UInt32]] = [:]
        for flow in flows {
            let totals = Totals(retransmits: flow.retransmits, segmentsOut: flow.segmentsOut, segmentsIn: flow.segmentsIn)
            next[flow.id] = totals
            // Only a flow seen before has a delta; counters that went back are another socket.
            guard let before = last[flow.id], totals.segmentsOut >= before.segmentsOut,
                  totals.retransmits >= before.retransmits, totals.segmentsIn >= before.segmentsIn else { continue }
            let sent = UInt64(totals.segmentsOut - before.segmentsOut)
            let received = UInt64(totals.segmentsIn - before.segmentsIn)
            guard sent > 0 || received > 0 else { continue }
            // Its RTT is fresh only while it exchanges segments.
            if flow.rttMicros > 0 { activeRtt[flow.remote, default: []].append(flow.rttMicros) }
            if before.segmentsOut >= warmSegments, sent > 0, !Self.queued(flow) {
                deltas.append(Delta(at: now, remote: flow.remote, retransmits: UInt64(totals.retransmits - before.retransmits),
                                    segments: sent))
            }
        }
        last = next
        connections = activeRtt.values.reduce(0) { $0 + $1.count }
        remotes = activeRtt.count
        if activeRtt.count >= minRemotes {
            let medians = activeRtt.values.map { Self.lowerMedian($0) }
            rttMs = Double(Self.lowerMedian(medians)) / 1000
        } else {
            rttMs = nil
        }
        return decide(at: now)
    }

    /// What a probe round saw: its round trip (nil when it failed) and
    /// whether its name lookup failed or timed out.
    public mutating func probe(rttMs: Double?, dnsFailed: Bool, at now: Moment) -> Quality? {
        if let rttMs { probeRttMs = rttMs }
        if dnsFailed { dnsFailures.append(now) }
        return decide(at: now)
    }

    /// The share of retransmitted segments in the window, the worst remote
    /// left out; nil with too few remotes or segments to tell.
    var retransmitShare: Double? {
        var perRemote: [[UInt8]: (retransmits: UInt64, segments: UInt64)] = [:]
        for d in deltas {
            perRemote[d.remote, default: (0, 0)].retransmits += d.retransmits
            perRemote[d.remote, default: (0, 0)].segments += d.segments
        }
        guard perRemote.count >= minRemotes else { return nil }
        let share = { (t: (retransmits: UInt64, segments: UInt64)) in
            t.segments == 0 ? 0 : Double(t.retransmits) / Double(t.segments)
        }
        let worst = perRemote.max { share($0.value) < share($1.value) }!.key
        var retransmits: UInt64 = 0, segments: UInt64 = 0
        for (remote, t) in perRemote where remote != worst {
            retransmits += t.retransmits
            segments += t.segments
        }
        guard segments >= minSegments else { return nil }
        return Double(retransmits) / Double(segments)
    }

    private mutating func decide(at now: Moment) -> Quality? {
        let start = now.advanced(by: .zero - window)
        deltas.removeAll { $0.at < start }
        dnsFailures.removeAll { $0 < start }
        let share = retransmitShare
        let (level, reason) = judge(share: share)
        let reading = Quality(level: level, rttMs: rttMs, retransmitShare: share, connections: connections,
                              remotes: remotes, dnsFailures: dnsFailures.count, probeRttMs: probeRttMs, reason: reason)
        if let published, published.level == level {
            candidate = nil
            guard let at = publishedAt, at.duration(to: now) >= refresh, reading != published else { return nil }
            return publish(reading, at: now)
        }
        if candidate?.level != level { candidate = (level, now) }
        guard let since = candidate?.since, since.duration(to: now) >= hold else { return nil }
        candidate = nil
        return publish(reading, at: now)
    }

    private mutating func publish(_ reading: Quality, at now: Moment) -> Quality {
        published = reading
        publishedAt = now
        return reading
    }

    private func judge(share: Double?) -> (QualityLevel, String) {
        let t = thresholds
        if let share, share >= t.poorShare { return (.poor, "\(Self.percent(share)) of segments retransmitted") }
        if let rttMs, rttMs >= t.poorRttMs { return (.poor, "round trips take \(Int(rttMs)) ms") }
        if dnsFailures.count >= t.poorDNSFailures { return (.poor, "\(dnsFailures.count) name lookups failed") }
        if let share, share >= t.degradedShare { return (.degraded, "\(Self.percent(share)) of segments retransmitted") }
        if let rttMs, rttMs >= t.degradedRttMs { return (.degraded, "round trips take \(Int(rttMs)) ms") }
        if !dnsFailures.isEmpty { return (.degraded, "a name lookup failed") }
        if let probeRttMs, probeRttMs >= t.degradedProbeRttMs { return (.degraded, "the check took \(Int(probeRttMs)) ms") }
        return (.good, "")
    }

    static func percent(_ share: Double) -> String {
        let tenths = Int((share * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }

    /// The lower of the two middle values for an even count: with two remotes
    /// the better one decides, so one slow server cannot make the network slow.
    static func lowerMedian<T: Comparable>(_ values: [T]) -> T {
        let sorted = values.sorted()
        return sorted[(sorted.count - 1) / 2]
    }
}
