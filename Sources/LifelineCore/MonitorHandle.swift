/// A monitor's one door into the core: it can publish what it sees, learn the
/// path the link monitors see, and ask for a check; it cannot read or change the state.
public struct MonitorHandle: Sendable {
    let bus: Bus
    /// The slot, and which ownership of it this handle stands for (see `Bus.release`).
    let slot: StatePipeline.Slot
    public let name: String

    public func publish(_ observation: Observation) {
        bus.publish(observation, slot: slot)
    }

    /// Publishes a reachability verdict measured on `path`; dropped if the path
    /// has changed since (the route went away or moved to another interface).
    public func publish(_ observation: Observation, measuredOn path: LinkPath) {
        bus.publish(observation, slot: slot, measuredOn: path)
    }

    /// Publishes what the network itself stated on `path` (its captive-portal
    /// API says the user must sign in): at once, without the debounce window.
    public func publishStated(_ observation: Observation, measuredOn path: LinkPath) {
        bus.publishStated(observation, slot: slot, measuredOn: path)
    }

    /// The path now: which interface carries the default route, if any.
    public var path: LinkPath { bus.path }

    /// Whether the connection is metered, as the monitor that knows (NetworkManager) said last.
    public var metered: Bool { bus.current.metered }

    /// The page "Open sign-in page" opens (the probe's first http:// check
    /// URL, which a captive portal intercepts); nil withdraws it.
    public func announceSignInPage(_ url: String?) {
        bus.announceSignInPage(url, slot: slot)
    }

    /// The path now and after every change; call once and iterate.
    public func pathChanges() -> AsyncStream<LinkPath> {
        bus.pathChanges()
    }

    /// Asks monitors that can check (the probe) to do so now, e.g. after a route change.
    public func requestCheck() {
        bus.requestCheck()
    }

    /// Check requests for this monitor; call once and iterate.
    public func checkRequests() -> AsyncStream<Void> {
        bus.checkRequests()
    }

    /// The machine is about to sleep: alerts wait until it has resumed and
    /// its grace has passed. The state is still decided and published.
    public func holdAlertsForSleep() {
        bus.changeHold(slot: slot) { hold, _ in hold.sleep() }
    }

    /// The machine woke up: alerts wait `grace` more, then show only what still holds.
    public func resumed(grace: Duration) {
        bus.changeHold(slot: slot) { hold, now in hold.resume(at: now, grace: grace) }
    }

    /// Whether the login session is in front; alerts wait while it is not.
    public func sessionIsActive(_ active: Bool) {
        bus.changeHold(slot: slot) { hold, _ in hold.sessionInactive = !active }
    }

    /// Nothing is known of sleep or the session (the monitor starts, or lost logind).
    public func clearAlertHold() {
        bus.changeHold(slot: slot) { hold, _ in hold = AlertHold() }
    }
}
