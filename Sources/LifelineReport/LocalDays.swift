import Glibc

/// Days and hours in the local time zone (the C library's: `TZ`, else
/// /etc/localtime), for the rows and cells of `history --chart` and the days
/// and weeks of `history --report`. Times are µs
/// since the Unix epoch, as in the event log. A day is not always 24 hours long:
/// where the clocks go forward an hour has no length, where they go back one
/// lasts two.
public enum LocalDays {
    /// Local midnight at the start of the day that holds `micros`, moved `days` days on.
    public static func midnight(of micros: Int64, plusDays days: Int = 0) -> Int64 {
        var parts = localParts(micros)
        parts.tm_mday += Int32(days)
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        return fromLocal(&parts)
    }

    /// The 25 boundaries of the day that starts at `midnight`: the start of each
    /// hour 0…23, then the next midnight.
    public static func hourBoundaries(ofDayAt midnight: Int64) -> [Int64] {
        let day = localParts(midnight)
        return (0...24).map { hour in
            var parts = day
            parts.tm_hour = Int32(hour)
            parts.tm_min = 0
            parts.tm_sec = 0
            return fromLocal(&parts)
        }
    }

    /// "Mon 2026-11-23".
    public static func dayLabel(_ micros: Int64) -> String { format(micros, "%a %Y-%m-%d") }

    /// "Mon 2026-11-23 14:05".
    public static func dayAndMinute(_ micros: Int64) -> String { format(micros, "%a %Y-%m-%d %H:%M") }

    /// "2026-11-23 14:05:09".
    public static func second(_ micros: Int64) -> String { format(micros, "%Y-%m-%d %H:%M:%S") }

    /// The zone in force at `micros`, as "CET, UTC+01:00".
    public static func zone(at micros: Int64) -> String {
        let parts = localParts(micros)
        let offset = Int(parts.tm_gmtoff)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        let hhmm = twoDigits(minutes / 60) + ":" + twoDigits(minutes % 60)
        let name = parts.tm_zone.map { String(cString: $0) } ?? ""
        return (name.isEmpty ? "" : name + ", ") + "UTC" + sign + hhmm
    }

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func localParts(_ micros: Int64) -> tm {
        // Rounded down, also before 1970: -1 µs is in the second before the epoch.
        var seconds = time_t(micros >= 0 ? micros / 1_000_000 : (micros + 1) / 1_000_000 - 1)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return parts
    }

    private static func fromLocal(_ parts: inout tm) -> Int64 {
        // Let the C library decide whether summer time applies at that moment.
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1_000_000
    }

    /// The day of the week of `micros`: 0 Sunday … 6 Saturday.
    public static func weekday(_ micros: Int64) -> Int { Int(localParts(micros).tm_wday) }

    /// `micros` as `strftime` writes `pattern`, local time (names of days and
    /// months in the C locale's English: translate them, don't print them).
    public static func format(_ micros: Int64, _ pattern: String) -> String {
        var parts = localParts(micros)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
