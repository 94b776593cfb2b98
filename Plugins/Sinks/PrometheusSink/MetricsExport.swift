import Glibc
import LifelineCore
import LifelinePlatform
import Prometheus

/// The tally as Prometheus metrics, in the text exposition format that
/// node_exporter's textfile collector reads (swift-prometheus writes it).
/// Used from the sink's file thread only.
final class MetricsExport: @unchecked Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let states: [(ConnectivityState, Gauge)]
    private let transitions: Counter
    private let outages: Counter
    private let outageSeconds: Counter
    private let lastChange: Gauge
    /// Present only while a probe round trip is known: an absent series is how
    /// Prometheus says "no value", where -1 would draw as a real one.
    private var rtt: Gauge?
    /// What the counters show: they only ever move up, by the difference.
    private var exported = (transitions: Int64(0), outages: Int64(0), outageMicros: Int64(0))
    private let quality: QualityMetrics

    /// Names as namespace, name and unit: `lifeline` + `outage_seconds` + `total`.
    private static func name(_ metric: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "lifeline", metricName: metric, unitName: unit, helpText: help)
    }

    static var rttName: MetricNameDescriptor {
        name("probe_rtt", unit: "seconds", "Round trip of the last probe that answered, in seconds; absent while none has.")
    }

    init() {
        let registry = self.registry
        states = ConnectivityState.allCases.map { state in
            (state, registry.makeGauge(descriptor: Self.name("state", "1 for the current connectivity state, 0 for the others."),
                                       labels: [("state", state.rawValue)]))
        }
        transitions = registry.makeCounter(descriptor: Self.name("transitions", unit: "total", "Published state transitions since the daemon started."))
        outages = registry.makeCounter(descriptor: Self.name(
            "outages", unit: "total", "Outages (a published degradation until the next online) begun since the daemon started."))
        outageSeconds = registry.makeCounter(descriptor: Self.name(
            "outage_seconds", unit: "total", "Seconds spent in outages since the daemon started, the current one included."))
        lastChange = registry.makeGauge(descriptor: Self.name(
            "last_change_timestamp", unit: "seconds", "When the current state began, in seconds since the Unix epoch."))
        quality = QualityMetrics(registry: registry)
    }

    /// The exposition text for `tally` at `now` (µs since the epoch).
    func render(_ tally: MetricsTally, now: Int64) -> [UInt8] {
        for (state, gauge) in states { gauge.set(to: state == tally.state ? 1 : 0) }
        lastChange.set(to: Double(tally.lastChange) / 1e6)
        if tally.rttMs >= 0 {
            let gauge = rtt ?? registry.makeGauge(descriptor: Self.rttName)
            gauge.set(to: tally.rttMs / 1000)
            rtt = gauge
        } else if let gauge = rtt {
            registry.unregisterGauge(gauge)
            rtt = nil
        }
        let outageMicros = tally.outageMicros(now: now)
        if tally.transitions > exported.transitions { transitions.increment(by: tally.transitions - exported.transitions) }
        if tally.outages > exported.outages { outages.increment(by: tally.outages - exported.outages) }
        if outageMicros > exported.outageMicros { outageSeconds.increment(by: Double(outageMicros - exported.outageMicros) / 1e6) }
        exported = (max(exported.transitions, tally.transitions), max(exported.outages, tally.outages), max(exported.outageMicros, outageMicros))
        quality.render(tally)
        return registry.emitToBuffer()
    }
}

/// Replaces the metrics file whole: a reader (node_exporter, any moment) sees
/// the old file or the new one, never half of one. Readable by all whatever the
/// umask: node_exporter runs as a user of its own.
enum MetricsFile {
    static func replace(_ path: String, with bytes: [UInt8]) throws(Files.Error) {
        try Files.replaceAtomically(path, with: bytes, mode: 0o644)
    }
}
