import LifelineCore
import LifelineFormats

/// What the tmux sink writes, as pure functions: the `@lifeline` value and the
/// alert message, made safe for tmux. Every escape for tmux lives here.
///
/// Values from outside (a reason from a third-party monitor, an interface name)
/// are shown literally. In the status line tmux draws `#{@lifeline}` without
/// expanding it again (no `#()` command, no `#{}` format, no strftime) but still
/// reads `#[…]` in it as a style, and `##` as one `#`: so `#` is doubled.
/// `display-message` expands its message fully: formats, `#()` commands and
/// strftime (`%Y`, `%s`), so there `%` is doubled too. Control characters are
/// made visible, and each value is cut to `maxValueLength` (a status line holds
/// one line, and tmux gets the text as one argument of bounded size). The
/// user's own template is passed through, so it may carry tmux styles
/// (`format = "#[bold]{icon}#[nobold] {state}"`).
enum TmuxText {
    /// The foreground colour per state: the usual green / yellow / orange / red.
    static func colour(_ state: ConnectivityState) -> String {
        switch state {
        case .online: "green"
        case .portal: "yellow"
        case .limited: "colour208"
        case .offline: "red"
        case .unknown: "default"
        }
    }

    /// Longer values end in "…".
    static let maxValueLength = 256

    /// The value of `@lifeline`, ready to pass as one argument to `tmux set`.
    /// `{duration}` is shown to the minute: the sink refreshes it once a minute.
    static func status(_ e: StateEvent, template: String, colors: Bool, now: Int64) -> String {
        var text = StatusFormat.render(template, e, now: now, escape: escapeValue, duration: StatusFormat.minutes)
        if colors {
            // `fg=default` rather than `default`: keep the user's background and
            // attributes around `#{@lifeline}` in status-right.
            text = "#[fg=\(colour(e.state))]" + text + "#[fg=default]"
        }
        return argument(text)
    }

    /// The alert shown by `display-message` when no notification server runs.
    static func alert(_ e: StateEvent) -> String {
        var text = "Lifeline: " + e.state.rawValue
        if !e.interface.isEmpty { text += " (\(bounded(e.interface)))" }
        if !e.reason.isEmpty { text += " — " + bounded(e.reason) }
        return argument(escapeMessage(text))
    }

    /// A value in the status line: shown literally, on one line.
    static func escapeValue(_ value: String) -> String {
        doubling(["#"], in: TerminalText.visible(bounded(value)))
    }

    /// A whole `display-message` text: shown literally, nothing expanded or run.
    static func escapeMessage(_ text: String) -> String {
        doubling(["#", "%"], in: TerminalText.visible(text))
    }

    /// At most `maxValueLength` Unicode scalars (not characters: one character
    /// can hold any number of combining marks).
    static func bounded(_ value: String) -> String {
        guard value.utf8.count > maxValueLength, value.unicodeScalars.count > maxValueLength else { return value }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: value.unicodeScalars.prefix(maxValueLength - 1))
        return String(cut) + "…"
    }

    private static func doubling(_ specials: Set<Unicode.Scalar>, in text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if specials.contains(scalar) { out.unicodeScalars.append(scalar) }
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// tmux splits commands at an argument that ends in `;` (it drops the `;`);
    /// `\;` at the end stands for a literal one.
    static func argument(_ text: String) -> String {
        text.hasSuffix(";") ? String(text.dropLast()) + "\\;" : text
    }
}
