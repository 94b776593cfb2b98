/// What comes out of the tray thread: the user's clicks and the watcher's comings and goings.
enum TrayEvent: Sendable, Equatable {
    /// A left click on the icon.
    case activate
    /// Menu items.
    case check, mute, unmute, openLog, signIn
    /// "Venue information": the page the network's captive-portal API named for it.
    case venue
    /// "Open report", under "Recent outages".
    case openReport
    /// The host is about to open "Recent outages".
    case outagesAboutToShow
    case registered
    case registrationFailed(String)
    case watcherAppeared
    case watcherVanished
    /// No session bus to put the icon on.
    case noBus(String)
    /// The session bus went away; the icon comes back with it.
    case busLost
}
