import LifelineCore
import Prometheus

/// The quality attribute as metrics: a gauge per level (1 for the current,
/// all 0 while unknown), and histograms of the round trip and the retransmit
/// share, one observation per published reading (a level change, or the
/// numbers refreshed while a level holds), so `histogram_quantile` over a day
/// shows the evening slowdown where one gauge shows only the last value.
///
///     lifeline_quality{level="degraded"} 1
///     lifeline_quality_rtt_seconds_bucket{le="0.3"} 41
///     lifeline_quality_retransmit_ratio_bucket{le="0.01"} 37
final class QualityMetrics: @unchecked Sendable {
    private let levels: [(QualityLevel, Gauge)]
    private let rtt: ValueHistogram
    private let share: ValueHistogram
    private var observed: Int64 = 0

    /// Bounds around the estimator's thresholds (300 ms and 1 s; 1 % and 5 %).
    static let rttBuckets = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2]
    static let shareBuckets = [0.001, 0.005, 0.01, 0.02, 0.05, 0.08, 0.15, 0.3]

    init(registry: PrometheusCollectorRegistry) {
        levels = QualityLevel.allCases.map { level in
            (level, registry.makeGauge(descriptor: MetricNameDescriptor(
                namespace: "lifeline", metricName: "quality", unitName: "",
                helpText: "1 for the connection's current quality, 0 for the others (all 0 while unknown)."),
                labels: [("level", level.rawValue)]))
        }
        rtt = registry.makeValueHistogram(descriptor: MetricNameDescriptor(
            namespace: "lifeline", metricName: "quality_rtt", unitName: "seconds",
            helpText: "Median round trip of the user's TCP connections, one observation per quality reading."),
            buckets: Self.rttBuckets)
        share = registry.makeValueHistogram(descriptor: MetricNameDescriptor(
            namespace: "lifeline", metricName: "quality_retransmit", unitName: "ratio",
            helpText: "Share of segments retransmitted, one observation per quality reading."),
            buckets: Self.shareBuckets)
    }

    func render(_ tally: MetricsTally) {
        for (level, gauge) in levels { gauge.set(to: tally.quality?.level == level ? 1 : 0) }
        let fresh = Int(min(tally.qualityCount - observed, Int64(tally.recentQualities.count)))
        for q in tally.recentQualities.suffix(max(0, fresh)) {
            if let ms = q.rttMs { rtt.record(ms / 1000) }
            if let s = q.retransmitShare { share.record(s) }
        }
        observed = tally.qualityCount
    }
}
