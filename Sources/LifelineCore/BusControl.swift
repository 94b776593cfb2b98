/// Debounce windows (docs/design.md, "Dedup and debounce").
public struct DebounceSettings: Sendable, Equatable {
    public var down: Duration
    public var up: Duration
    public init(down: Duration = .seconds(2), up: Duration = .seconds(1)) {
        self.down = down
        self.up = up
    }
}

/// What sinks may ask of the core: a narrow handle, so no sink can change the state.
public protocol BusControl: Sendable {
    /// The state published last.
    var current: StateEvent { get }
    /// Asks every monitor that can check (the probe) to check now.
    func requestCheck()
    /// Checks now, waits for a reachability result (at most `timeout`) and returns
    /// the state after it. An explicit check publishes its result without debounce.
    func check(timeout: Duration) async -> StateEvent
    /// No alerts until `duration` from now (toast "Mute for 1 hour", D-Bus `Mute`).
    func mute(for duration: Duration)
    /// The notification sink says whether a notification server is on the bus;
    /// every sink then sees it in `Update.notificationServerPresent`.
    func reportNotificationServer(present: Bool)
    /// The job board (`lifeline run`'s commands), nil where there is none.
    var jobs: JobControl? { get }
    /// The network's sign-in page as its captive-portal API named it
    /// (https:// only), else the page a captive portal intercepts (the
    /// probe's first check URL, plain http://); nil when neither is known.
    var signInPage: String? { get }
    /// "Open sign-in page": starts the desktop's browser on `signInPage` and
    /// checks again soon and often, so signing in is seen within seconds.
    func openSignInPage()
}

extension BusControl {
    public var jobs: JobControl? { nil }
    public var signInPage: String? { nil }
    public func openSignInPage() {}
}
