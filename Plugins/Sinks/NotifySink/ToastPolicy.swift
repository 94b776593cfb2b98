import LifelineCore
import LifelinePlatform

/// What the desktop toast should look like. Summary and body are plain text
/// here; the notifier prepares them for the server (escaping, bounds).
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
    /// Offer "Retry" and "Cancel" for the commands waiting for the network.
    public var hasJobActions = false
    /// Offer "Open sign-in page" (a portal, and a probe that announced the page).
    public var hasSignInAction = false
    /// Offer "Extend" alone (a session's end is near and the network can extend it).
    public var extendsSession = false
    /// The actions' labels, in the language of the toast's text.
    public var labels = Labels()
    /// The notification spec's category.
    public var category = "network.disconnected"
}

/// The one-alert-per-outage rule as a pure state machine: fed every update the
/// sink takes and every word from the notification server, it says what to do
/// with the toast. It knows nothing of libnotify, so the rule is tested without
/// a desktop.
///
/// - An outage gets one toast, updated in place as its state changes.
/// - Only the user's own dismissal silences the outage, and only until its state
///   changes (offline → portal is news: the user now has to sign in).
/// - A server that closes the toast because an action was invoked did not hear a
///   dismissal; the answer to "Check now" is shown, in a toast that comes back if needed.
/// - Recovery turns the outage toast into "Back online" in place; an outage the
///   user never saw (muted throughout, no server) gets no "Back online".
/// - While muted nothing shows; when the mute ends during an outage, it shows.
/// - While alerts are held (the machine sleeps or has just resumed, the session
///   is not in front) nothing shows and nothing counts as seen, like a mute: when
///   the hold lifts during an outage its toast shows, and an outage that ended
///   meanwhile gets no "Back online" unless the user had seen it.
public struct ToastPolicy: Sendable {
    public enum Action: Equatable, Sendable {
        /// Show a new toast (no toast of ours is on screen).
        case show(Toast)
        /// Replace the toast on screen in place (same id).
        case update(Toast)
        /// Close the toast on screen.
        case close
        /// Recovery: replaces the outage toast in place when it is up, else a new short toast.
        case backOnline(Toast)
    }

    /// Why the server closed our toast (the notification spec's reasons).
    public enum CloseReason: Sendable, Equatable {
        case expired, dismissedByUser, closedByCall, undefined
    }

    public var backOnlineMessage: Bool
    /// The language the toast speaks: the user's, read once.
    public var translator: Translator
    /// The outage whose toast is on screen, the state it shows, and the toast.
    private var shown: (outage: UInt64, state: ConnectivityState, toast: Toast)?
    /// The newest outage the user was shown a toast for.
    private var seen: UInt64 = 0
    /// The user dismissed this outage's toast while it said `state`.
    private var dismissed: (outage: UInt64, state: ConnectivityState)?
    private var backOnlineSent: UInt64 = 0
    /// An action was invoked on the toast: the close that servers send with it is no dismissal.
    private var actionInvoked = false
    /// "Check now" answered in this outage and state: the toast says so.
    private var checked: (outage: UInt64, state: ConnectivityState)?
    private var serverPresent = true

    public init(backOnlineMessage: Bool = true, translator: Translator = .user) {
        self.backOnlineMessage = backOnlineMessage
        self.translator = translator
    }

    public var isShowing: Bool { shown != nil }

    public mutating func take(_ update: Update, now: Int64) -> [Action] {
        guard let outage = update.outage else {
            return closeIfShown()
        }
        if outage.isOver {
            let sawIt = seen >= outage.id
            guard backOnlineMessage, serverPresent, sawIt, backOnlineSent < outage.id, !update.isMuted(at: now),
                  !update.alertsHeld else {
                return closeIfShown()
            }
            backOnlineSent = outage.id
            shown = nil
            return [.backOnline(Self.backOnline(outage, event: update.event, translator))]
        }
        if update.isMuted(at: now) || !serverPresent || update.alertsHeld {
            // Nothing shows, and nothing counts as seen: when the mute ends (or a
            // server appears) during this outage, its toast appears then.
            return closeIfShown()
        }
        let state = update.event.state
        if let d = dismissed, d.outage == outage.id {
            if d.state == state { return [] }
            dismissed = nil
        }
        if let c = checked, c.outage != outage.id || c.state != state { checked = nil }
        return present(Self.toast(for: update.event, checked: checked != nil, translator).listing(update.jobs, translator), outage: outage.id, state: state)
    }

    /// An action was invoked on the toast on screen.
    public mutating func actionWasInvoked() {
        if shown != nil { actionInvoked = true }
    }

    /// The server closed our toast.
    public mutating func closedByServer(_ reason: CloseReason) {
        guard let s = shown else { return }
        shown = nil
        if reason == .dismissedByUser, !actionInvoked {
            dismissed = (s.outage, s.state)
        }
        actionInvoked = false
    }

    /// "Check now" finished; `current` is the latest update. An ongoing outage's
    /// toast shows the answer, and comes back for it if the server had closed it.
    /// A recovery is shown by `take` as usual.
    public mutating func checkFinished(current: Update, now: Int64) -> [Action] {
        actionInvoked = false
        guard let outage = current.outage, !outage.isOver, !current.isMuted(at: now), serverPresent,
              !current.alertsHeld else { return [] }
        let state = current.event.state
        checked = (outage.id, state)
        if dismissed?.outage == outage.id { dismissed = nil }  // asking is the opposite of dismissing
        return present(Self.toast(for: current.event, checked: true, translator).listing(current.jobs, translator), outage: outage.id, state: state)
    }

    /// The notification server left the bus: whatever it showed is gone.
    public mutating func serverVanished() {
        serverPresent = false
        shown = nil
        actionInvoked = false
    }

    /// A notification server is on the bus (again): an ongoing outage shows, once.
    public mutating func serverAppeared(current: Update?, now: Int64) -> [Action] {
        // Present all along (the first word from the bus watch): nothing was lost.
        guard !serverPresent else { return [] }
        serverPresent = true
        shown = nil
        guard let current else { return [] }
        return take(current, now: now)
    }

    private mutating func present(_ toast: Toast, outage: UInt64, state: ConnectivityState) -> [Action] {
        let previous = shown
        shown = (outage, state, toast)
        seen = max(seen, outage)
        guard let previous else { return [.show(toast)] }
        return previous.toast == toast ? [] : [.update(toast)]
    }

    private mutating func closeIfShown() -> [Action] {
        guard shown != nil else { return [] }
        shown = nil
        actionInvoked = false
        return [.close]
    }
}
