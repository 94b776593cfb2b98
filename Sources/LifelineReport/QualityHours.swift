import LifelineCore
import LifelineFormats

/// The connection's quality by local hour of the day over the report's span:
/// the picture of "the evenings are slow" a user hands to a provider. Made
/// from the log's quality lines (one per published reading: a level change,
/// or the numbers refreshed while a level holds), so an hour shows only what
/// was read while traffic flowed in it.
public struct QualityHour: Sendable, Equatable {
    /// 0…23, local time.
    public var hour: Int
    public var readings: Int
    /// Medians over the hour's readings; nil when none had the number.
    public var rttMs: Double?
    public var retransmitShare: Double?
    /// Readings that were `degraded` or `poor`.
    public var degraded: Int

    /// The hours of the day that have readings in `window`, in order.
    public static func hours(_ marks: [QualityMark], window: Range<Int64>) -> [QualityHour] {
        var byHour: [Int: [Quality]] = [:]
        for mark in marks where window.contains(mark.at) {
            byHour[LocalDays.hour(of: mark.at), default: []].append(mark.quality)
        }
        return byHour.keys.sorted().map { hour in
            let readings = byHour[hour]!
            return QualityHour(hour: hour, readings: readings.count, rttMs: median(readings.compactMap(\.rttMs)),
                               retransmitShare: median(readings.compactMap(\.retransmitShare)),
                               degraded: readings.filter { $0.level != .good }.count)
        }
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

extension LocalDays {
    /// The local hour of the day (0…23) at `micros`.
    public static func hour(of micros: Int64) -> Int {
        Int(format(micros, "%H")) ?? 0
    }
}
