import LifelineCore
import LifelineProtocol

/// What the tmux sink writes, as pure functions: the `@lifeline` value and the
/// alert message, made safe for tmux.
///
/// Values from outside (a reason from a third-party monitor, an interface name)
/// are shown literally: `#` is doubled so `#[…]` in a reason cannot restyle the
/// status line and `#(…)` in an alert cannot run a command (`display-message`
/// expands formats). The user's own template is passed through, so it may carry
/// tmux styles (`format = "#[bold]{icon}#[nobold] {state}"`).
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

    /// The value of `@lifeline`, ready to pass as one argument to `tmux set`.
    static func status(_ e: StateEvent, template: String, colors: Bool, now: Int64) -> String {
        var text = StatusFormat.render(template, e, now: now, escape: escapeValue)
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
        if !e.interface.isEmpty { text += " (\(e.interface))" }
        if !e.reason.isEmpty { text += " — " + e.reason }
        return argument(escapeValue(text))
    }

    /// A value shown literally on one line: `#` doubled, control characters
    /// (a newline would break the status line) turned into spaces.
    static func escapeValue(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "#": out += "##"
            case let c where c.value < 0x20 || c.value == 0x7F: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// tmux splits commands at an argument that ends in `;` (it drops the `;`);
    /// `\;` at the end stands for a literal one.
    static func argument(_ text: String) -> String {
        text.hasSuffix(";") ? String(text.dropLast()) + "\\;" : text
    }
}
