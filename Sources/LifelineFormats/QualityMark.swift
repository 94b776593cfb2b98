import LifelineCore

/// The event log's quality lines: `{"mark":"quality","since":…,"quality":"good",
/// "quality_details":{…}}`, one each time the published quality changes (its
/// level, or its numbers, which the estimator refreshes at most every five
/// minutes while a level holds). A few lines an hour while traffic flows,
/// none while idle: enough for `history --report` to draw round trips and
/// retransmissions per hour. Readers of transitions skip it as every mark.
public struct QualityMark: Sendable, Equatable {
    public var at: Int64
    public var quality: Quality

    public init(at: Int64, quality: Quality) {
        self.at = at
        self.quality = quality
    }

    public var line: String {
        let fields = [("mark", JSONText.quote("quality")), ("since", String(at))] + JSONText.qualityFields(quality)
        return "{" + fields.map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// Nil when the line is not a quality mark, or one out of range.
    public static func parse(_ bytes: some Collection<UInt8>) -> QualityMark? {
        var mark: String?, since: Int64?, level: QualityLevel?, details: [UInt8]?
        let wellFormed = FlatJSON.forEachMember(Array(bytes)) { key, value in
            switch (key, value) {
            case ("mark", .string(let s)): mark = s
            case ("since", _): since = value.int64
            case ("quality", .string(let s)): level = QualityLevel(rawValue: s)
            case ("quality_details", .nested(let text)): details = text
            default: break
            }
        }
        guard wellFormed, mark == "quality", let since, StateRecord.timeRange.contains(since), let level, let details,
              let quality = Quality.parse(level: level, details: details)
        else { return nil }
        return QualityMark(at: since, quality: quality)
    }
}

/// What the log sink has written of the quality, so each value goes once.
public struct QualityMarkWriter: Sendable {
    private var written: Quality?

    public init() {}

    /// The line `update` brings, if its quality is new; `now`: µs since the epoch.
    public mutating func mark(for update: Update, now: Int64) -> QualityMark? {
        guard let q = update.event.quality, q != written else { return nil }
        written = q
        return QualityMark(at: now, quality: q)
    }
}
