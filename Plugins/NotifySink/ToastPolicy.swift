import LifelineCore

/// What the desktop toast should look like.
public struct Toast: Equatable, Sendable {
    public enum Urgency: Int, Sendable { case low = 0, normal = 1, critical = 2 }

    public var summary: String
    public var body: String
    /// A name from the freedesktop icon naming spec.
    public var icon: String
    public var urgency: Urgency
    /// Offer "Check now" and "Mute for 1 hour".
    public var hasActions: Bool
    /// Milliseconds; -1 lets the server decide, 0 keeps it until closed.
    public var timeout: Int32
}

/// The one-alert-per-outage rule of SPEC §3 as a pure state machine: fed every
/// update the sink takes, it says what to do with the notification server. It
/// knows nothing of libnotify, so the rule is tested without a desktop.
public struct ToastPolicy: Sendable {
    public enum Action: Equatable, Sendable {
        /// Show a new toast (no toast of ours is on screen).
        case show(Toast)
        /// Replace the toast on screen in place (same id).
        case update(Toast)
        /// Close the toast on screen.
        case close
        /// A transient "Back online" toast (never replaces an outage toast).
        case backOnline(Toast)
    }

    public var backOnlineMessage: Bool
    /// The outage whose toast is on screen, and what it shows.
    private var shown: (outage: UInt64, toast: Toast)?
    /// Outages already alerted: a toast the user dismissed does not come back.
    private var alerted: UInt64 = 0
    private var backOnlineSent: UInt64 = 0

    public init(backOnlineMessage: Bool = true) {
        self.backOnlineMessage = backOnlineMessage
    }

    public var isShowing: Bool { shown != nil }

    public mutating func take(_ update: Update, now: Int64) -> [Action] {
        guard let outage = update.outage else {
            return closeIfShown()
        }
        if outage.isOver {
            var actions = closeIfShown()
            let alertedThisOne = alerted >= outage.id
            if backOnlineMessage, alertedThisOne, backOnlineSent < outage.id, !update.isMuted(at: now) {
                backOnlineSent = outage.id
                actions.append(.backOnline(Self.backOnline(outage, event: update.event)))
            }
            return actions
        }
        if update.isMuted(at: now) {
            // Muted: say nothing, and take down what is up.
            alerted = max(alerted, outage.id)
            return closeIfShown()
        }
        let toast = Self.toast(for: update.event)
        if let current = shown, current.outage == outage.id {
            guard current.toast != toast else { return [] }
            shown = (outage.id, toast)
            return [.update(toast)]
        }
        guard alerted < outage.id else { return [] }  // dismissed by the user: once is enough
        alerted = outage.id
        let actions: [Action] = shown == nil ? [.show(toast)] : [.update(toast)]
        shown = (outage.id, toast)
        return actions
    }

    /// The server closed our toast (user dismissed it, or it expired).
    public mutating func closedByServer() {
        shown = nil
    }

    /// The notification server went away and came back: whatever it showed is
    /// gone. If an outage is still on, show it again, once.
    public mutating func serverRestarted(current: Update, now: Int64) -> [Action] {
        let wasShowing = shown
        shown = nil
        guard let o = wasShowing?.outage, current.outage?.id == o, current.outage?.isOver == false,
              !current.isMuted(at: now)
        else { return [] }
        let toast = Self.toast(for: current.event)
        shown = (o, toast)
        return [.show(toast)]
    }

    private mutating func closeIfShown() -> [Action] {
        guard shown != nil else { return [] }
        shown = nil
        return [.close]
    }

    static func toast(for e: StateEvent) -> Toast {
        let on = e.interface.isEmpty ? "" : " on \(e.interface)"
        switch e.state {
        case .offline:
            return Toast(summary: "Offline", body: sentence(e.reason, or: "No network connection."),
                         icon: "network-offline", urgency: .critical, hasActions: true, timeout: 0)
        case .portal:
            return Toast(summary: "Sign in to the network", body: "The network\(on) wants you to sign in first. "
                         + sentence(e.reason, or: ""), icon: "network-error", urgency: .normal, hasActions: true, timeout: 0)
        default:
            return Toast(summary: "Connected, but no internet", body: "The network\(on) does not reach the internet. "
                         + sentence(e.reason, or: ""), icon: "network-error", urgency: .normal, hasActions: true, timeout: 0)
        }
    }

    static func backOnline(_ outage: Outage, event: StateEvent) -> Toast {
        let lasted = DurationText.human(.microseconds((outage.endedAt ?? outage.since) - outage.since))
        let was = outage.worst == .offline ? "offline" : "without internet"
        let via = event.interface.isEmpty ? "" : " via \(event.interface)"
        return Toast(summary: "Back online", body: "Back online\(via) — \(was) for \(lasted).",
                     icon: "network-transmit-receive", urgency: .low, hasActions: false, timeout: 5000)
    }

    private static func sentence(_ text: String, or fallback: String) -> String {
        guard let first = text.first else { return fallback }
        var s = first.uppercased() + text.dropFirst()
        if !s.hasSuffix(".") { s += "." }
        return s
    }
}
