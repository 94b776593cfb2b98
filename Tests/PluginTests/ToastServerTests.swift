import LifelineCore
import Testing
@testable import NotifySink

/// What the toast sends each server, from what the server says about itself.
/// The names and capabilities are those the servers answered on this machine.
@Suite struct ToastServerTests {
    static let servers: [String: Set<String>] = [
        "dunst": ["actions", "body", "body-hyperlinks", "icon-static", "synchronous", "private-synchronous",
                  "x-canonical-private-synchronous", "x-dunst-stack-tag", "body-markup"],
        "mako": ["body", "body-markup", "actions", "icon-static", "x-canonical-private-synchronous", "x-dunst-stack-tag"],
        "SwayNotificationCenter": ["actions", "body", "body-markup", "body-images", "persistence", "synchronous",
                                   "private-synchronous", "x-canonical-private-synchronous"],
        "gnome-shell": ["actions", "body", "body-markup", "icon-static", "persistence", "sound"],
        "Xfce Notify Daemon": ["action-icons", "actions", "body", "body-hyperlinks", "body-markup", "icon-static",
                               "x-canonical-private-icon-only"],
        "Notification Daemon": ["actions", "body", "body-hyperlinks", "body-markup", "icon-static", "sound", "persistence",
                                "action-icons"],
        // KDE Plasma 5.27's notification server, as its source declares it.
        "Plasma": ["body", "body-hyperlinks", "body-markup", "body-images", "icon-static", "actions", "persistence",
                   "inline-reply", "x-kde-urls", "x-kde-origin-name", "x-kde-display-appname", "inhibitions"],
    ]

    static var offline: Toast {
        ToastPolicy.toast(for: StateEvent(state: .offline, previous: .online, since: 1, reason: "cable out", sequence: 1))
    }

    func server(_ name: String) -> ToastServer { ToastServer(name: name, capabilities: Self.servers[name]!) }

    /// The labels a user can pick: every action where the server draws them all
    /// (xfce4-notifyd) or lists them in a menu (dunst, mako); all but `default` elsewhere.
    func visible(_ name: String, _ toast: Toast) -> [String] {
        let drawsDefault = ["dunst", "mako", "Xfce Notify Daemon"].contains(name)
        return server(name).actions(for: toast).filter { drawsDefault || $0.key != "default" }.map(\.label)
    }

    @Test(arguments: Array(servers.keys))
    func everyActionIsVisibleOnceAndAClickIsCheckNow(_ name: String) {
        let actions = server(name).actions(for: Self.offline)
        #expect(actions.first?.key == "default")
        #expect(actions.first?.label == "Check now")
        #expect(visible(name, Self.offline).sorted() == ["Check now", "Mute for 1 hour"], "\(actions)")
    }

    @Test func serversThatHideTheDefaultActionGetCheckNowAsAButton() {
        for name in ["gnome-shell", "Plasma", "SwayNotificationCenter", "Notification Daemon"] {
            #expect(server(name).actions(for: Self.offline).map(\.key) == ["default", "retry", "mute"], "\(name)")
        }
        for name in ["dunst", "mako", "Xfce Notify Daemon"] {
            #expect(server(name).actions(for: Self.offline).map(\.key) == ["default", "mute"], "\(name)")
        }
    }

    /// Whatever actions the toast has (the waiting commands' here), each is sent once.
    @Test func extraActionsAreSentOnceEach() {
        var toast = Self.offline
        toast.hasJobActions = true
        #expect(server("gnome-shell").actions(for: toast).map(\.key) == ["default", "retry", "mute", "jobs-retry", "jobs-cancel"])
        #expect(server("mako").actions(for: toast).map(\.key) == ["default", "mute", "jobs-retry", "jobs-cancel"])
    }

    @Test func noActionsForAServerWithoutThem() {
        #expect(ToastServer(name: "x", capabilities: ["body"]).actions(for: Self.offline).isEmpty)
        #expect(ToastServer(name: "x", capabilities: []).actions(for: Self.offline).isEmpty)
    }

    @Test func backOnlineHasNoActions() {
        let back = ToastPolicy.backOnline(Outage(id: 1, since: 0, worst: .offline, endedAt: 1_000_000),
                                          event: StateEvent(state: .online, previous: .offline, since: 1, reason: "", sequence: 2))
        #expect(server("gnome-shell").actions(for: back).isEmpty)
        // GNOME Shell draws no banner for a low-urgency toast.
        #expect(back.urgency == .normal)
        #expect(back.category == "network.connected")
    }

    /// mako 1.7.1 crashes on an update that names its toast by id and by tag.
    @Test func aStackingTagGoesOnlyWithANewToastAndOnlyWhereAdvertised() {
        #expect(server("mako").stackingHint(replacing: false) == "x-dunst-stack-tag")
        #expect(server("mako").stackingHint(replacing: true) == nil)
        #expect(server("SwayNotificationCenter").stackingHint(replacing: false) == "x-canonical-private-synchronous")
        #expect(server("dunst").stackingHint(replacing: true) == nil)
        #expect(server("gnome-shell").stackingHint(replacing: false) == nil)
        #expect(server("Xfce Notify Daemon").stackingHint(replacing: false) == nil)
    }

    @Test func markupOnlyWhereTheServerReadsIt() {
        #expect(server("gnome-shell").readsMarkup)
        #expect(!ToastServer(name: "x", capabilities: ["body", "actions"]).readsMarkup)
        // No answer: escape anyway, and ask again.
        #expect(ToastServer(name: "", capabilities: []).readsMarkup)
        #expect(!ToastServer(name: "", capabilities: []).isKnown)
    }
}
