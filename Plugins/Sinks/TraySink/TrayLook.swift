import LifelineCore

/// What the tray icon shows for one state: the StatusNotifierItem's IconName,
/// Status and ToolTip, and whether the menu offers "Unmute".
struct TrayLook: Equatable, Sendable {
    /// A name from the freedesktop icon naming spec, the toast's for the same state.
    var icon: String
    /// Passive: hosts may tuck the icon away; Active and NeedsAttention ask to be seen.
    var status: String
    /// The tooltip's title and text, as markup.
    var heading: String
    var text: String
    var muted: Bool
    /// The menu offers "Open sign-in page" (a captive portal stands in the way).
    var signIn = false
    /// The menu offers "Venue information" (the network's captive-portal API named a page for it).
    var venue = false

    init(_ update: Update, now: Int64) {
        let e = update.event
        signIn = e.state == .portal
        venue = e.captivePortal?.venueInfoURL != nil
        switch e.state {
        case .online:
            (icon, status) = ("network-transmit-receive", "Passive")
        case .offline:
            (icon, status) = ("network-offline", "NeedsAttention")
        case .limited, .portal:
            (icon, status) = ("network-error", "Active")
        case .unknown:
            (icon, status) = ("network-idle", "Passive")
        }
        // Hosts render the tooltip as markup, and the sentence carries names
        // from the network (a Wi-Fi's, a portal's `Location`).
        heading = MarkupText.escaped(TrayText.heading(e.state))
        text = MarkupText.escaped(TrayText.sentence(e))
        muted = update.isMuted(at: now)
    }
}
