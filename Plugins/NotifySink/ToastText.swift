/// Turns a toast's text into what the notification server receives.
///
/// Reasons come from the network (a captive portal writes its own `Location`
/// header) and from exec monitors (any program's output). Servers that read
/// markup (`body-markup`) would otherwise render a portal's `<a href>` as a live
/// link under our "Sign in to the network", or show nothing at a lone `&`. So the
/// text is escaped for that markup, terminal and other control characters are
/// dropped, and its length is bounded. The notifier sends nothing else.
enum ToastText {
    /// Longest summary and body, in Unicode scalars, before "…".
    static let summaryLimit = 100
    static let bodyLimit = 500

    static func summary(_ text: String, markup: Bool) -> String {
        prepared(text, limit: summaryLimit, markup: markup)
    }

    static func body(_ text: String, markup: Bool) -> String {
        prepared(text, limit: bodyLimit, markup: markup)
    }

    /// `markup`: the server reads body markup, so `& < > " '` are written as entities.
    static func prepared(_ text: String, limit: Int, markup: Bool) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(min(text.utf8.count, limit * 2))
        var kept = 0
        for scalar in text.unicodeScalars {
            if kept == limit {
                out += "…"
                break
            }
            if isControl(scalar) {
                // A line break stays a line break; every other control is dropped.
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

    /// C0, DEL, C1 and the bidirectional overrides that can reorder what a line seems to say.
    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
