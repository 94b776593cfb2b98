import LifelineCore

/// What the `prometheus` sink has seen since it started, as the figures it
/// exports. Counters start at zero with the sink (daemon start or reload), the
/// way Prometheus expects of a process: `rate()` and `increase()` take a reset
/// in their stride, while a count carried over from an earlier run could count
/// the same outage twice.
struct MetricsTally: Sendable {
    let startedAt: Int64
    var state: ConnectivityState = .unknown
    /// µs since the epoch at which `state` began.
    var lastChange: Int64
    /// Milliseconds, or -1 while no probe has answered on this path.
    var rttMs: Double = -1
    /// How well the connection works now; nil while unknown (not online, or no traffic seen).
    var quality: Quality?
    /// Quality readings published so far, and the latest of them (at most
    /// `recentLimit`), for the histograms to observe each once.
    private(set) var qualityCount: Int64 = 0
    private(set) var recentQualities: [Quality] = []
    static let recentLimit = 64
    private(set) var transitions: Int64 = 0
    private(set) var outages: Int64 = 0
    private var lastSequence: UInt64?
    private var lastOutageID: UInt64?
    /// The outage in progress, and from when this sink counts its time.
    private var open: (id: UInt64, countedFrom: Int64)?
    private var closedMicros: Int64 = 0

    init(startedAt: Int64) {
        self.startedAt = startedAt
        lastChange = startedAt
    }

    mutating func take(_ update: Update, now: Int64) {
        let event = update.event
        state = event.state
        lastChange = event.since
        rttMs = event.rttMs
        if let q = event.quality, q != quality {
            qualityCount += 1
            recentQualities.append(q)
            if recentQualities.count > Self.recentLimit { recentQualities.removeFirst() }
        }
        quality = event.quality
        if update.isTransition, event.sequence != lastSequence {
            transitions += 1
            lastSequence = event.sequence
        }
        // An outage ends on the update that carries its end, or, should that one
        // never come, when the state says it is over.
        if let current = open, update.outage?.id != current.id || update.outage?.isOver == true || event.state == .online {
            let end = update.outage?.id == current.id ? update.outage?.endedAt ?? event.since : event.since
            closedMicros = Self.adding(closedMicros, max(0, end - current.countedFrom))
            open = nil
        }
        if let outage = update.outage, !outage.isOver, open == nil, outage.id != lastOutageID {
            lastOutageID = outage.id
            if update.isTransition {
                // Published while this sink ran: all of it is this run's, even
                // the debounce before it, which may reach back before the start.
                outages += 1
                open = (outage.id, outage.since)
            } else {
                // Going on when the sink started (a reload): the run before
                // counted it; only its time from now on is this run's.
                open = (outage.id, max(outage.since, startedAt))
            }
        }
    }

    /// Time spent in outages since the sink started, the one in progress included.
    func outageMicros(now: Int64) -> Int64 {
        guard let open else { return closedMicros }
        return Self.adding(closedMicros, max(0, now - open.countedFrom))
    }

    private static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
