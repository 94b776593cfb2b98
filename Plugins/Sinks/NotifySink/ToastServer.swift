/// The notification server on the bus, as it describes itself
/// (`GetServerInformation`, `GetCapabilities`), and what the toast sends it
/// because of that. Nothing here is guessed from the desktop's name or the
/// environment: a server is judged by what it says.
///
/// - Actions go only to a server with `actions`. A click on the toast (the
///   `default` action) is "Check now" everywhere. Servers that draw `default` as a
///   button (xfce4-notifyd) or list it in their action menu (dunst, mako) show
///   that as the one "Check now"; servers that keep `default` for a click and draw
///   no button for it (GNOME Shell, KDE Plasma, swaync, notification-daemon) get
///   "Check now" as a button of its own as well, so every action is a button.
/// - A stacking tag (`x-dunst-stack-tag`, else `x-canonical-private-synchronous`)
///   goes only to a server that advertises it, and only with a new toast: an
///   update in place already names the toast by its id, and the tag would make
///   the server replace it a second time (mako 1.7.1 crashes on that).
/// - Markup is escaped where the server reads it (`body-markup`).
struct ToastServer: Equatable, Sendable {
    /// `GetServerInformation`'s name ("gnome-shell", "Plasma", "mako", …).
    var name: String
    var capabilities: Set<String>

    /// Servers whose `default` action is a click on the toast and never a button.
    static let defaultActionHidden: Set<String> = ["gnome-shell", "Plasma", "SwayNotificationCenter", "Notification Daemon"]

    /// The tag that keeps one toast of ours if its id was lost (the daemon
    /// restarted while it was up), in the order tried.
    static let stackingHints = ["x-dunst-stack-tag", "x-canonical-private-synchronous"]

    /// A failed `GetCapabilities` answers nothing: ask again next time.
    var isKnown: Bool { !capabilities.isEmpty }

    /// Summary and body as markup, escaped. A server that did not answer is
    /// written to as if it read markup: a stray "&amp;" is better than a live link.
    var readsMarkup: Bool { capabilities.isEmpty || capabilities.contains("body-markup") }

    var hidesDefaultAction: Bool { Self.defaultActionHidden.contains(name) }

    /// The actions as sent (identifier, label): `default` first, then each button once.
    func actions(for toast: Toast) -> [(key: String, label: String)] {
        guard capabilities.contains("actions") else { return [] }
        let buttons = toast.buttons
        guard let checkNow = buttons.first(where: { $0.key == Toast.checkNowAction }) else {
            return buttons.map { ($0.key, $0.label) }
        }
        let drawn = hidesDefaultAction ? buttons : buttons.filter { $0.key != Toast.checkNowAction }
        return [("default", checkNow.label)] + drawn.map { ($0.key, $0.label) }
    }

    /// The stacking hint a toast carries: none when it replaces one by id.
    func stackingHint(replacing: Bool) -> String? {
        guard !replacing else { return nil }
        return Self.stackingHints.first { capabilities.contains($0) }
    }
}
