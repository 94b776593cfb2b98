import LifelineCore
import LifelineFormats

/// `history --csv` and `--json`: the rows of the report's table of outages,
/// with the same columns, for a spreadsheet or a script. Times in the JSON are
/// µs since the epoch as in the log; in the CSV, local time with its offset
/// from UTC, which spreadsheets read. An outage still going has no end yet.
public enum OutageColumns {
    public static let names = ["start", "end", "duration_s", "worst", "layer", "cause", "ended_by", "reason"]

    public static func json(_ rows: [OutageRow]) -> String {
        let objects = rows.map { row in
            let values = [
                String(row.start),
                row.ending == .ongoing ? "null" : String(row.end),
                JSONText.number(Double(row.duration) / 1e6),
                JSONText.quote(row.worst.rawValue),
                JSONText.quote(row.layer.rawValue),
                JSONText.quote(row.cause.rawValue),
                JSONText.quote(row.ending.rawValue),
                JSONText.quote(row.reason),
            ]
            return "{" + zip(names, values).map { JSONText.quote($0) + ":" + $1 }.joined(separator: ",") + "}"
        }
        return objects.isEmpty ? "[]" : "[\n" + objects.joined(separator: ",\n") + "\n]"
    }

    /// RFC 4180: a header, then one line per outage, CRLF-terminated; a field
    /// with a comma, a quote or a line break is quoted. A field that a
    /// spreadsheet would run as a formula (=, +, -, @ first) starts with a `'`.
    public static func csv(_ rows: [OutageRow]) -> String {
        var out = names.joined(separator: ",") + "\r\n"
        for row in rows {
            let fields = [
                isoTime(row.start),
                row.ending == .ongoing ? "" : isoTime(row.end),
                JSONText.number(Double(row.duration) / 1e6),
                row.worst.rawValue, row.layer.rawValue, row.cause.rawValue, row.ending.rawValue,
                row.reason,
            ]
            out += fields.map(field).joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func field(_ text: String) -> String {
        var text = text
        if let first = text.first, "=+-@".contains(first), Double(text) == nil { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }

    /// "2026-11-23T14:05:09+01:00", local time.
    static func isoTime(_ micros: Int64) -> String {
        let offset = LocalDays.format(micros, "%z")  // "+0100"
        let colon = offset.count == 5 ? String(offset.prefix(3)) + ":" + String(offset.suffix(2)) : offset
        return LocalDays.format(micros, "%Y-%m-%dT%H:%M:%S") + colon
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
