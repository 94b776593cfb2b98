import LifelineCore
import LifelinePlatform

/// Renders a state through a user's template (`status --format`):
/// `{state}`, `{icon}`, `{interface}`, `{kind}`, `{rtt_ms}`, `{since}`,
/// `{duration}`, `{reason}`, `{connection}`, `{quality}` (`good`, `degraded`,
/// `poor`, or empty while unknown). Unknown fields are left as written, so a typo shows.
public enum StatusFormat {
    public static let defaultTemplate = "{icon} {state}"

    /// Short, single-width icons from one family (circles filling up as the
    /// connection gets better) that every common terminal font has: a status line
    /// reads at a glance without a Nerd Font.
    public static func icon(_ state: ConnectivityState) -> String {
        switch state {
        case .online: "●"
        case .portal: "◍"
        case .limited: "◐"
        case .offline: "○"
        case .unknown: "◌"
        }
    }

    /// A colour per state as `#RRGGBB`, for bars that take one (i3bar, waybar
    /// without CSS). The usual meanings: green good, yellow/orange degraded, red bad.
    public static func color(_ state: ConnectivityState) -> String {
        switch state {
        case .online: "#00CC66"
        case .portal: "#E5C07B"
        case .limited: "#FF9F1C"
        case .offline: "#FF5555"
        case .unknown: "#888888"
        }
    }

    /// `escape` is applied to every field value, never to the template: a surface
    /// that interprets markup (tmux `#[…]`, Pango) or control characters (a
    /// terminal) keeps the user's own markup and shows values (a reason from a
    /// third-party monitor) literally. `duration` writes `{duration}`: a surface
    /// that is not redrawn every second shows it coarser.
    public static func render(
        _ template: String, _ e: StateEvent, now: Int64, escape: (String) -> String = { $0 },
        duration: (Duration) -> String = DurationText.human
    ) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = rest[rest.index(after: open)..<close]
            if let value = field(String(name), e, now: now, duration: duration) {
                out += escape(value)
            } else {
                out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// The line for a person: "online via wlan0 (wifi) for 2m 13s: probe answered in 23 ms",
    /// in the language of `t` (English: the values as programs read them, the
    /// event's own reason). `escape` is applied to what comes from outside (names,
    /// the reason), never to the words of the sentence. Without `duration`, for
    /// lines printed at the moment of a change.
    public static func plainLine(
        _ e: StateEvent, now: Int64, translator t: Translator = .english, duration: Bool = true,
        escape: (String) -> String = { $0 }
    ) -> String {
        var line = t.stateName(e.state)
        // Without a connection's name, the line has always left "metered" out.
        var named = e
        if e.connection.isEmpty { named.metered = false }
        let via = named.connectionText(t)
        // Translators: the status line is built in steps: {state} is a state's name
        // ("online"), then the line so far. {connection} is "wlan0 (wifi)".
        if !via.isEmpty { line = t.tr("{state} via {connection}", ["state": line, "connection": escape(via)]) }
        if duration {
            let held = t.duration(elapsed(since: e.since, now: now))
            line = t.tr("{state} for {duration}", ["state": line, "duration": escape(held)])
        }
        let reason = e.reasonText(t)
        if !reason.isEmpty { line = t.tr("{state}: {reason}", ["state": line, "reason": escape(reason)]) }
        return line
    }

    /// How long the state has held at `now`; zero for a `since` in the future.
    /// `since` comes from files other programs can write, so any value, even
    /// Int64.min, gives an answer rather than an overflow.
    public static func elapsed(since: Int64, now: Int64) -> Duration {
        let (difference, overflow) = now.subtractingReportingOverflow(since)
        if overflow { return since < 0 ? .microseconds(Int64.max) : .zero }
        return .microseconds(max(0, difference))
    }

    /// `{duration}` to the minute ("<1m", "45m", "2h 5m"): for a surface that is
    /// refreshed once a minute, where seconds would stand still and mislead.
    public static func minutes(_ d: Duration) -> String {
        let total = max(0, d.microseconds / 60_000_000)
        if total == 0 { return "<1m" }
        let (h, m) = (total / 60, total % 60)
        if h > 0 { return m > 0 ? "\(h)h \(m)m" : "\(h)h" }
        return "\(m)m"
    }

    static func field(
        _ name: String, _ e: StateEvent, now: Int64, duration: (Duration) -> String = DurationText.human
    ) -> String? {
        switch name {
        case "state": e.state.rawValue
        case "icon": icon(e.state)
        case "interface": e.interface
        case "kind": e.kind.rawValue
        case "rtt_ms": e.rttMs < 0 ? "" : JSONText.number(e.rttMs.rounded())
        case "since": String(e.since)
        case "duration": duration(elapsed(since: e.since, now: now))
        case "reason": e.reason
        case "connection": e.connection
        case "quality": e.quality?.level.rawValue ?? ""
        default: nil
        }
    }
}
