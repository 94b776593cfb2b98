/// Why alerts (the toast, tmux's `display-message`) wait while the state itself
/// goes on being decided and published.
///
/// A machine that sleeps loses its network on the way down and spends the
/// first seconds after resume reassociating Wi-Fi: neither is an outage the
/// user should be told about. A session that is locked or switched away has
/// no one watching its toasts: the one for an outage still in progress is
/// shown when the session is in front again. The bus keeps one hold per
/// monitor that reports these (the logind monitor), so a monitor that stops
/// takes its hold with it.
public struct AlertHold: Sendable, Equatable {
    /// Between "about to sleep" and resume.
    public var sleeping = false
    /// After resume, alerts wait until this moment (bus time).
    public var graceEnds: Moment?
    /// The login session is not in front (locked, switched to another user).
    public var sessionInactive = false

    public init(sleeping: Bool = false, graceEnds: Moment? = nil, sessionInactive: Bool = false) {
        self.sleeping = sleeping
        self.graceEnds = graceEnds
        self.sessionInactive = sessionInactive
    }

    public func isHeld(at now: Moment) -> Bool {
        sleeping || sessionInactive || isInGrace(at: now)
    }

    /// When the hold lifts by itself: the end of the resume grace, while it is
    /// ahead and nothing else holds the alerts anyway.
    public func lifts(after now: Moment) -> Moment? {
        guard !sleeping, !sessionInactive, isInGrace(at: now) else { return nil }
        return graceEnds
    }

    private func isInGrace(at now: Moment) -> Bool {
        guard let graceEnds else { return false }
        return now < graceEnds
    }

    /// The machine is about to sleep: alerts wait until resume and its grace.
    public mutating func sleep() {
        sleeping = true
        graceEnds = nil
    }

    /// The machine woke up at `now`: alerts wait `grace` longer, while the
    /// network comes back by itself.
    public mutating func resume(at now: Moment, grace: Duration) {
        sleeping = false
        graceEnds = now.advanced(by: grace)
    }
}
