import LifelineCore
import LifelinePlatform

/// What `lifeline watch --format F` prints: pure renderers, one line
/// per state, so any source of changes (the state file, D-Bus) can drive them.
///
/// - `plain`: a line for a person ("offline via wlan0 (wifi): default route removed").
/// - `json`: every field of the state, one object per line.
/// - `i3bar`: the i3bar/swaybar protocol: a header, `[`, then one status line
///   (an array of blocks) per change, each followed by a comma (the "infinite array").
/// - `waybar`: one object per line with `text`, `tooltip`, `class` (the state,
///   and the quality while one is known: `["online","degraded"]`) and
///   `alt` (the state, for `format-icons`), for a `custom` module with `return-type: json`.
/// - a template containing `{…}` fields, as `status --format` (polybar `tail = true`).
public enum WatchFormat: Sendable, Equatable {
    case plain
    case json
    case i3bar
    case waybar
    case template(String)

    public static let names = ["plain", "json", "i3bar", "waybar"]

    /// Nil for a word that is neither a known format nor a template.
    public init?(argument: String) {
        switch argument {
        case "plain": self = .plain
        case "json": self = .json
        case "i3bar": self = .i3bar
        case "waybar": self = .waybar
        default:
            guard argument.contains("{") else { return nil }
            self = .template(argument)
        }
    }

    /// Lines printed once, before the first state.
    public var header: [String] {
        switch self {
        case .i3bar: [#"{"version":1}"#, "["]
        default: []
        }
    }

    /// The line for `e` (nil: no daemon runs), without the newline. Each surface
    /// escapes field values for its own syntax, here and nowhere else: a terminal
    /// (plain, templates) sees control characters made visible; waybar parses
    /// `text` and `tooltip` as Pango markup, so `&`, `<` and `>` (a portal's URL,
    /// an HTML page) are written as entities; i3bar blocks say `markup: none`, so
    /// i3bar and swaybar show `full_text` as it is; JSON strings are quoted.
    /// The sentences for a person (plain, waybar's tooltip) are in the language of
    /// `translator` (default: the user's); what bars match on (text, class) is not.
    public func line(_ e: StateEvent?, now: Int64, translator: Translator? = nil) -> String {
        let e = e ?? Self.noDaemon(at: now)
        switch self {
        case .plain:
            return StatusFormat.plainLine(e, now: now, translator: translator ?? .user, duration: false,
                                          escape: TerminalText.visible)
        case .json:
            return JSONText.object(e)
        case .template(let template):
            return StatusFormat.render(template, e, now: now, escape: TerminalText.visible)
        case .i3bar:
            let text = StatusFormat.render(StatusFormat.defaultTemplate, e, now: now, escape: TerminalText.visible)
            let block = [
                ("name", JSONText.quote("lifeline")),
                ("full_text", JSONText.quote(text)),
                ("short_text", JSONText.quote(StatusFormat.icon(e.state))),
                ("color", JSONText.quote(StatusFormat.color(e.state))),
                ("urgent", e.state == .offline ? "true" : "false"),
                ("markup", JSONText.quote("none")),
            ]
            return "[" + Self.object(block) + "],"
        case .waybar:
            let text = StatusFormat.render(StatusFormat.defaultTemplate, e, now: now, escape: Self.markup)
            var tooltip = StatusFormat.plainLine(e, now: now, translator: translator ?? .user, duration: false,
                                                 escape: Self.markup)
            // With a quality, `class` is an array (waybar takes both): the state,
            // then `good`, `degraded` or `poor`, so a style can colour a slow link.
            var classes = JSONText.quote(e.state.rawValue)
            if let q = e.quality {
                classes = "[" + classes + "," + JSONText.quote(q.level.rawValue) + "]"
                tooltip += "\n" + Self.markup(q.summary)
            }
            return Self.object([
                ("text", JSONText.quote(text)),
                ("tooltip", JSONText.quote(tooltip)),
                ("class", classes),
                ("alt", JSONText.quote(e.state.rawValue)),
            ])
        }
    }

    /// A value inside Pango markup: shown as written, never parsed as a tag or an
    /// entity. Control characters are made visible first (Pango refuses most of
    /// them, and a refused tooltip is shown empty).
    public static func markup(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in TerminalText.visible(value).unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// When the line for `e` changes with nothing else changing (ms from `now`):
    /// only a template showing `{duration}` does, each second under an hour and
    /// each minute after (the resolution `DurationText.human` shows). Nil: the
    /// line changes only with the state, so `watch` sleeps until it does.
    public func refreshAfterMs(_ e: StateEvent?, now: Int64) -> Int32? {
        guard case .template(let template) = self, template.contains("{duration}"), let e else { return nil }
        let elapsedMs = max(0, now - e.since) / 1000
        let step: Int64 = elapsedMs < 3_600_000 ? 1000 : 60_000
        return Int32(step - elapsedMs % step)
    }

    /// What a bar shows while no daemon runs: `unknown`, saying why.
    public static func noDaemon(at now: Int64) -> StateEvent {
        StateEvent(state: .unknown, previous: .unknown, since: now, reason: "lifeline daemon not running", sequence: 0)
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
