/// Text from outside on a surface that reads markup: a toast's body (servers
/// with `body-markup`) and the tray's tooltip (Plasma and waybar render it as
/// rich text).
///
/// Reasons come from the network (a captive portal writes its own `Location`
/// header), connection names from whoever named the Wi-Fi, and exec monitors
/// print anything. Such a surface would render a portal's `<a href>` as a live
/// link under our "Sign in to the network", or show nothing at a lone `&`. So
/// the text is escaped for that markup, terminal and other control characters
/// are dropped, and its length is bounded.
public enum MarkupText {
    /// `text` without control characters (a line break stays a line break), cut
    /// at `limit` Unicode scalars with "…" after; with `markup`, `& < > " '` are
    /// written as entities.
    public static func prepared(_ text: String, limit: Int, markup: Bool) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(min(text.utf8.count, limit))
        var kept = 0
        for scalar in text.unicodeScalars {
            if kept == limit {
                out += "…"
                break
            }
            if isControl(scalar) {
                if scalar == "\n" { out += "\n"; kept += 1 }
                continue
            }
            kept += 1
            guard markup else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` escaped for markup, with control characters dropped; no length limit.
    public static func escaped(_ text: String) -> String {
        prepared(text, limit: .max, markup: true)
    }

    /// C0, DEL, C1 and the bidirectional overrides that can reorder what a line seems to say.
    public static func isControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
