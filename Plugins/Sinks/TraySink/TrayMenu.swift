import CDbusmenu

/// The icon's menu, served by libdbusmenu-glib (com.canonical.dbusmenu) on the
/// tray's loop: Check now, Open sign-in page (behind a captive portal only),
/// Venue information (where the network's captive-portal API names a page),
/// Mute for 1 hour / Unmute, Recent outages, Open log.
/// Created and changed on the tray loop only; clicks come out as `TrayEvent`s.
final class TrayMenu {
    static let path = "/StatusNotifierItem/Menu"

    private let server: OpaquePointer
    private let root: UnsafeMutablePointer<DbusmenuMenuitem>
    private let mute: UnsafeMutablePointer<DbusmenuMenuitem>
    private let signIn: UnsafeMutablePointer<DbusmenuMenuitem>
    private var signInShown = true
    private let venue: UnsafeMutablePointer<DbusmenuMenuitem>
    private var venueShown = true
    private let outages: UnsafeMutablePointer<DbusmenuMenuitem>
    /// The last two items of "Recent outages", kept while its lines are replaced.
    private let reportSeparator: UnsafeMutablePointer<DbusmenuMenuitem>
    private let openReport: UnsafeMutablePointer<DbusmenuMenuitem>
    private let events: AsyncStream<TrayEvent>.Continuation
    private(set) var muted = false
    private var outageLines: [String]?

    init(events: AsyncStream<TrayEvent>.Continuation) {
        self.events = events
        server = OpaquePointer(dbusmenu_server_new(Self.path))
        root = dbusmenu_menuitem_new()
        mute = dbusmenu_menuitem_new()
        signIn = dbusmenu_menuitem_new()
        venue = dbusmenu_menuitem_new()
        outages = dbusmenu_menuitem_new()
        reportSeparator = dbusmenu_menuitem_new()
        openReport = dbusmenu_menuitem_new()
        dbusmenu_menuitem_property_set(reportSeparator, DBUSMENU_MENUITEM_PROP_TYPE, "separator")  // DBUSMENU_CLIENT_TYPES_SEPARATOR, in client.h, which the shim does not include
        label(openReport, TrayText.openReport)
        let check = dbusmenu_menuitem_new()!
        let openLog = dbusmenu_menuitem_new()!
        label(check, TrayText.checkNow)
        label(mute, TrayText.mute)
        label(signIn, TrayText.signIn)
        label(venue, TrayText.venue)
        label(outages, TrayText.recentOutages)
        dbusmenu_menuitem_property_set(outages, DBUSMENU_MENUITEM_PROP_CHILD_DISPLAY, DBUSMENU_MENUITEM_CHILD_DISPLAY_SUBMENU)
        label(openLog, TrayText.openLog)
        for item in [check, signIn, venue, mute, outages, openLog] { dbusmenu_menuitem_child_append(root, item) }
        onClick(check) { $0.events.yield(.check) }
        onClick(signIn) { $0.events.yield(.signIn) }
        onClick(venue) { $0.events.yield(.venue) }
        onClick(mute) { $0.events.yield($0.muted ? .unmute : .mute) }
        onClick(openLog) { $0.events.yield(.openLog) }
        onClick(openReport) { $0.events.yield(.openReport) }
        let opening = Click(menu: self) { $0.events.yield(.outagesAboutToShow) }
        _ = lifeline_menuitem_connect_about_to_show(outages, { _, data in
            let click = Unmanaged<Click>.fromOpaque(data!).takeUnretainedValue()
            if let menu = click.menu { click.action(menu) }
            return 0
        }, Unmanaged.passRetained(opening).toOpaque(), { data, _ in Unmanaged<Click>.fromOpaque(data!).release() })
        // The item's list owns them now (child_append takes a reference).
        for item in [check, openLog] { lifeline_dbusmenu_object_unref(item) }
        setOutages([])
        setSignIn(false)
        setVenue(false)
        dbusmenu_server_set_root(UnsafeMutablePointer(server), root)
    }

    /// "Mute for 1 hour" while not muted, "Unmute" while muted.
    func setMuted(_ muted: Bool) {
        guard muted != self.muted else { return }
        self.muted = muted
        label(mute, muted ? TrayText.unmute : TrayText.mute)
    }

    /// "Open sign-in page" is shown only while a captive portal stands in the way.
    func setSignIn(_ shown: Bool) {
        guard shown != signInShown else { return }
        signInShown = shown
        dbusmenu_menuitem_property_set_bool(signIn, DBUSMENU_MENUITEM_PROP_VISIBLE, shown ? 1 : 0)
    }

    /// "Venue information" is shown only while the network's API names a page for it.
    func setVenue(_ shown: Bool) {
        guard shown != venueShown else { return }
        venueShown = shown
        dbusmenu_menuitem_property_set_bool(venue, DBUSMENU_MENUITEM_PROP_VISIBLE, shown ? 1 : 0)
    }

    /// The "Recent outages" submenu: one line per outage, newest first; one
    /// greyed-out line when there are none; then "Open report".
    func setOutages(_ lines: [String]) {
        guard lines != outageLines else { return }
        outageLines = lines
        while let first = dbusmenu_menuitem_get_children(outages)?.pointee.data {
            dbusmenu_menuitem_child_delete(outages, first.assumingMemoryBound(to: DbusmenuMenuitem.self))
        }
        for line in lines.isEmpty ? [TrayText.noOutages] : lines {
            let item = dbusmenu_menuitem_new()!
            label(item, line)
            // Lines to read, not to click.
            dbusmenu_menuitem_property_set_bool(item, DBUSMENU_MENUITEM_PROP_ENABLED, 0)
            dbusmenu_menuitem_child_append(outages, item)
            lifeline_dbusmenu_object_unref(item)
        }
        // Held by this menu as well, so taking them out above did not free them.
        dbusmenu_menuitem_child_append(outages, reportSeparator)
        dbusmenu_menuitem_child_append(outages, openReport)
    }

    /// Takes the menu off the bus.
    func close() {
        lifeline_dbusmenu_object_unref(UnsafeMutableRawPointer(server))
        lifeline_dbusmenu_object_unref(root)
        lifeline_dbusmenu_object_unref(mute)
        lifeline_dbusmenu_object_unref(signIn)
        lifeline_dbusmenu_object_unref(venue)
        lifeline_dbusmenu_object_unref(outages)
        lifeline_dbusmenu_object_unref(reportSeparator)
        lifeline_dbusmenu_object_unref(openReport)
    }

    private func label(_ item: UnsafeMutablePointer<DbusmenuMenuitem>, _ text: String) {
        dbusmenu_menuitem_property_set(item, DBUSMENU_MENUITEM_PROP_LABEL, text)
    }

    private func onClick(_ item: UnsafeMutablePointer<DbusmenuMenuitem>, _ action: @escaping (TrayMenu) -> Void) {
        let box = Click(menu: self, action: action)
        _ = lifeline_menuitem_connect_activated(item, { _, _, data in
            let click = Unmanaged<Click>.fromOpaque(data!).takeUnretainedValue()
            if let menu = click.menu { click.action(menu) }
        }, Unmanaged.passRetained(box).toOpaque(), { data, _ in Unmanaged<Click>.fromOpaque(data!).release() })
    }

    private final class Click {
        weak var menu: TrayMenu?
        let action: (TrayMenu) -> Void
        init(menu: TrayMenu, action: @escaping (TrayMenu) -> Void) {
            self.menu = menu
            self.action = action
        }
    }
}
