/// Renders a state through a user's template (SPEC §6 `--format`):
/// `{state}`, `{icon}`, `{interface}`, `{kind}`, `{rtt_ms}`, `{since}`,
/// `{duration}`, `{reason}`. Unknown fields are left as written, so a typo shows.
public enum StatusFormat {
    public static let defaultTemplate = "{icon} {state}"

    /// Short, single-width icons that every terminal font has.
    public static func icon(_ state: ConnectivityState) -> String {
        switch state {
        case .online: "●"
        case .portal: "◍"
        case .limited: "◐"
        case .offline: "○"
        case .unknown: "?"
        }
    }

    public static func render(_ template: String, _ e: StateEvent, now: Int64) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = rest[rest.index(after: open)..<close]
            if let value = field(String(name), e, now: now) {
                out += value
            } else {
                out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    static func field(_ name: String, _ e: StateEvent, now: Int64) -> String? {
        switch name {
        case "state": e.state.rawValue
        case "icon": icon(e.state)
        case "interface": e.interface
        case "kind": e.kind.rawValue
        case "rtt_ms": e.rttMs < 0 ? "" : JSONText.number(e.rttMs.rounded())
        case "since": String(e.since)
        case "duration": DurationText.human(.microseconds(max(0, now - e.since)))
        case "reason": e.reason
        default: nil
        }
    }
}
