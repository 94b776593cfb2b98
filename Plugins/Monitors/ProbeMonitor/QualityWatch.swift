import LifelineCore
import LifelineNet
import Synchronization

/// The `quality` attribute from the traffic already flowing: the counter
/// watcher hands it a sample only while the user's packets flow (it wakes then
/// anyway), so an idle machine costs no read and no wake-up; each probe round
/// adds its own round trip and whether its name lookup failed. Shared between
/// the watcher and the probe runs; the estimator behind it is pure.
final class QualityWatch: Sendable {
    typealias Reader = @Sendable (String) -> [FlowSample]?

    private let estimator: Mutex<(QualityEstimator, path: UInt64?, last: Moment?)>
    private let read: Reader
    private let report: @Sendable (Quality?) -> Void
    private let time: TimeSource
    /// sock_diag reads so far (tests count them).
    let reads = Atomic<Int>(0)
    /// The shortest time between two reads. A dump walks the kernel's whole
    /// table of TCP connections (every bucket, whatever the namespace holds):
    /// about 2 ms of kernel time per family here, where `ss -ti` spends 7 ms.
    /// The estimator's window is 30 s and its hold 10 s, so a read every 5 s
    /// while traffic flows sees what a read every second would, at a fifth of
    /// the cost.
    static let gap = Duration.seconds(5)
    /// How long after the last sample of the traffic a probe round still adds
    /// to the reading: the estimator's window.
    static let trafficWindow = Duration.seconds(30)

    init(time: TimeSource, estimator: QualityEstimator = QualityEstimator(), read: Reader? = nil,
         report: @escaping @Sendable (Quality?) -> Void) {
        self.estimator = Mutex((estimator, nil, nil))
        self.read = read ?? Self.sockDiag
        self.report = report
        self.time = time
    }

    /// One sample of the connections through `interface`, measured on path `generation`.
    func sample(interface: String, generation: UInt64, at now: Moment) {
        guard !interface.isEmpty else { return }
        let due = estimator.withLock { e in
            guard e.last.map({ $0.duration(to: now) >= Self.gap }) ?? true else { return false }
            e.last = now
            return true
        }
        guard due else { return }
        reads.add(1, ordering: .relaxed)
        guard let flows = read(interface) else { return }
        let changed = estimator.withLock { e -> Quality?? in
            let forgot = forget(&e, unless: generation)
            if let q = e.0.sample(flows, at: now) { return .some(q) }
            return forgot ? .some(nil) : nil
        }
        if let changed { report(changed) }
    }

    /// What a probe round saw on path `generation`: the fastest expected
    /// reply's round trip, and whether a name lookup failed or timed out.
    func probe(_ outcomes: [ProbeOutcome], generation: UInt64) {
        var rtt: Double?
        var dnsFailed = false
        for outcome in outcomes {
            switch outcome {
            case .pong(let ms): rtt = min(rtt ?? ms, ms)
            case .failed(_, layer: .dns): dnsFailed = true
            default: break
            }
        }
        // A round nothing answered is an outage, which the state tells; only
        // a lookup failing while the connection otherwise works is its quality.
        probe(rttMs: rtt, dnsFailed: dnsFailed && rtt != nil, generation: generation, at: time.now())
    }

    func probe(rttMs: Double?, dnsFailed: Bool, generation: UInt64, at now: Moment) {
        let changed = estimator.withLock { e -> Quality?? in
            let forgot = forget(&e, unless: generation)
            // The probe's numbers add to a reading of the user's traffic. Alone,
            // on a machine where nothing flowed for a window, they publish
            // nothing: an idle daemon then writes (and wakes) nothing for quality.
            guard let last = e.last, last.duration(to: now) <= Self.trafficWindow else { return forgot ? .some(nil) : nil }
            if let q = e.0.probe(rttMs: rttMs, dnsFailed: dnsFailed, at: now) { return .some(q) }
            return forgot ? .some(nil) : nil
        }
        if let changed { report(changed) }
    }

    /// A new path: what was measured on the old one says nothing of it.
    private func forget(_ e: inout (QualityEstimator, path: UInt64?, last: Moment?), unless generation: UInt64) -> Bool {
        guard e.path != generation else { return false }
        let had = e.0.published != nil
        e.0.reset()
        e.path = generation
        return had
    }

    /// The kernel's view of the connections through `interface`; nil when it could not be read.
    static let sockDiag: Reader = { interface in
        guard let reading = try? SockDiagReader.read(interface: interface) else { return nil }
        return reading.connections.compactMap(\.flowSample)
    }
}
