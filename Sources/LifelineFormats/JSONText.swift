import LifelineCore

/// Hand-written JSON output for the few shapes Lifeline prints on hot paths
/// (log lines, the state file, `status --json`): exact field order, no
/// Foundation, no allocation beyond the string itself.
public enum JSONText {
    public static func quote(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C1 controls too: some terminals act on U+009B as on ESC [.
            case let c where c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    public static func number(_ d: Double) -> String {
        guard d.isFinite else { return "-1" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    /// `{"ipv4":"online","ipv6":"limited"}`, only the families present.
    public static func families(_ f: FamilyStates) -> String {
        "{" + f.entries.map { quote($0.family) + ":" + quote($0.state.rawValue) }.joined(separator: ",") + "}"
    }

    /// `{"api":"https://…","source":"ra","captive":true,…}`: the keys the API gave.
    public static func captivePortal(_ p: CaptivePortal) -> String {
        "{" + p.members.map { member in
            let value = switch member.value {
            case .string(let s): quote(s)
            case .bool(let b): b ? "true" : "false"
            case .integer(let n): String(n)
            }
            return quote(member.name) + ":" + value
        }.joined(separator: ",") + "}"
    }

    /// One object with every field of an event, in the documented order (the
    /// log, the state file and `status --json` all print this).
    public static func object(_ e: StateEvent, extra: [(String, String)] = []) -> String {
        var fields: [(String, String)] = [
            ("state", quote(e.state.rawValue)),
            ("previous", quote(e.previous.rawValue)),
            ("since", String(e.since)),
            ("interface", quote(e.interface)),
            ("kind", quote(e.kind.rawValue)),
            ("reason", quote(e.reason)),
            ("rtt_ms", number(e.rttMs)),
            ("metered", e.metered ? "true" : "false"),
            ("sequence", String(e.sequence)),
            ("connection", quote(e.connection)),
            ("diagnosis", quote(e.diagnosis.rawValue)),
            ("families", families(e.families)),
        ]
        // Only through a VPN: every other line stays as it always was.
        if !e.underneath.isEmpty {
            fields += [("underneath", quote(e.underneath)), ("underneath_kind", quote(e.underneathKind.rawValue))]
        }
        // Only where a network announced a captive-portal API.
        if let portal = e.captivePortal { fields.append(("captive_portal", captivePortal(portal))) }
        if let q = e.quality { fields += qualityFields(q) }
        fields += extra
        return "{" + fields.map { quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
