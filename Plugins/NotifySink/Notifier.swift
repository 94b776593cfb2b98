import CNotify
import LifelineGLib

/// libnotify, owned: every call runs on the shared GLib loop thread, whose
/// context is thread-default there (FIELD-NOTES: otherwise action and `closed`
/// callbacks silently never fire). Events from the server (our toast closed, an
/// action invoked, the server appearing or vanishing) come out as an AsyncStream.
final class Notifier: @unchecked Sendable {
    // @unchecked: the mutable state below is touched on the loop thread only.
    enum Event: Sendable, Equatable {
        case closed
        case action(String)
        case serverAppeared
        case serverVanished
    }

    struct ShowError: Error, CustomStringConvertible {
        var description: String
    }

    private let loop: MainLoopThread
    private let events: AsyncStream<Event>.Continuation
    /// The outage toast on screen (a `NotifyNotification *`), and a back-online one.
    private var current: UnsafeMutablePointer<NotifyNotification>?
    private var transient: UnsafeMutablePointer<NotifyNotification>?
    private var watch: guint = 0
    private var serverSeen = false

    init(loop: MainLoopThread = .shared, events: AsyncStream<Event>.Continuation) {
        self.loop = loop
        self.events = events
        loop.sync {
            if notify_is_initted() == 0 { _ = notify_init("Lifeline") }
            watch = g_bus_watch_name(
                G_BUS_TYPE_SESSION, "org.freedesktop.Notifications", G_BUS_NAME_WATCHER_FLAGS_NONE,
                { _, _, _, data in
                    let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
                    me.serverSeen = true
                    me.events.yield(.serverAppeared)
                },
                { _, _, data in
                    Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue().events.yield(.serverVanished)
                },
                Unmanaged.passRetained(self).toOpaque(),
                { data in Unmanaged<Notifier>.fromOpaque(data!).release() })
        }
    }

    /// Shows `toast` as the outage toast: a new notification when `new`, else the
    /// one on screen updated in place (same id, libnotify's `replaces_id`).
    func show(_ toast: Toast, new: Bool) throws(ShowError) {
        try loop.sync { () throws(ShowError) in
            if new || current == nil {
                drop(&current)
                current = notify_notification_new(toast.summary, toast.body, toast.icon)
                connectClosed(current!)
            } else {
                notify_notification_update(current, toast.summary, toast.body, toast.icon)
            }
            try present(current!, toast)
        }
    }

    /// A short "Back online" toast, separate from (never replacing) the outage toast.
    func showTransient(_ toast: Toast) throws(ShowError) {
        try loop.sync { () throws(ShowError) in
            drop(&transient)
            transient = notify_notification_new(toast.summary, toast.body, toast.icon)
            lifeline_notify_set_bool_hint(transient, "transient", 1)
            try present(transient!, toast)
        }
    }

    /// Closes the outage toast, if one is up.
    func close() {
        loop.sync {
            guard let n = current else { return }
            current = nil  // a `closed` signal for it is ours, not the user's
            notify_notification_close(n, nil)
            lifeline_g_object_unref(n)
        }
    }

    /// Takes the toast down and stops listening (daemon shutdown or reload):
    /// a toast must not outlive the daemon that keeps it true.
    func shutdown() {
        close()
        loop.sync {
            drop(&transient)
            if watch != 0 { g_bus_unwatch_name(watch) }
            watch = 0
        }
        events.finish()
    }

    // MARK: On the loop thread

    private func present(_ n: UnsafeMutablePointer<NotifyNotification>, _ toast: Toast) throws(ShowError) {
        notify_notification_set_urgency(n, NotifyUrgency(UInt32(toast.urgency.rawValue)))
        notify_notification_set_timeout(n, toast.timeout)
        notify_notification_set_category(n, toast.urgency == .low ? "network.connected" : "network.disconnected")
        // Servers that stack by tag keep one toast even if ids were lost.
        lifeline_notify_set_string_hint(n, "x-dunst-stack-tag", "lifeline")
        lifeline_notify_set_string_hint(n, "x-canonical-private-synchronous", "lifeline")
        notify_notification_clear_actions(n)
        if toast.hasActions, lifeline_notify_server_has("actions") != 0 {
            // "default" is a click on the toast itself: the same as "Check now".
            for (id, label) in [("default", "Check now"), ("retry", "Check now"), ("mute", "Mute for 1 hour")] {
                notify_notification_add_action(n, id, label, { _, action, data in
                    let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
                    me.events.yield(.action(action.map { String(cString: $0) } ?? ""))
                }, Unmanaged.passRetained(self).toOpaque(), { data in
                    Unmanaged<Notifier>.fromOpaque(data!).release()
                })
            }
        }
        var error: UnsafeMutablePointer<GError>?
        if notify_notification_show(n, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            throw ShowError(description: message)
        }
    }

    private func connectClosed(_ n: UnsafeMutablePointer<NotifyNotification>) {
        _ = lifeline_notify_connect_closed(n, { n, data in
            let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
            // Only the toast on screen matters; ours closing by `close()` was cleared first.
            if let n, n == me.current { me.events.yield(.closed) }
        }, Unmanaged.passRetained(self).toOpaque(), { data, _ in
            Unmanaged<Notifier>.fromOpaque(data!).release()
        })
    }

    private func drop(_ n: inout UnsafeMutablePointer<NotifyNotification>?) {
        if let old = n { lifeline_g_object_unref(old) }
        n = nil
    }
}
