import CNotify
import LifelineCore
import LifelineGLib
import LifelinePlatform
import Synchronization

/// libnotify, owned. libnotify's calls to the server (Notify, GetCapabilities,
/// CloseNotification) are synchronous and wait up to 25 s for a server that
/// hangs, so they run on a GLib loop thread of their own, never on the loop
/// that serves the daemon's D-Bus interface and never on a cooperative-pool
/// thread: callers hop there asynchronously and wait without holding a thread.
///
/// libnotify binds to the GLib context that is thread-default where it is
/// initialised; without it, action and `closed` callbacks silently never fire.
/// `MainLoopThread` pushes its context as thread-default on its thread, and
/// libnotify is initialised there. libnotify is process-wide state, so there is
/// one such thread for the life of the process.
///
/// Events from the server (our toast closed, an action invoked, the server
/// appearing or vanishing) come out as an AsyncStream.
final class Notifier: @unchecked Sendable {
    // @unchecked: the mutable state below is touched on `Notifier.loop` only.
    enum Event: Sendable, Equatable {
        case closed(ToastPolicy.CloseReason)
        /// The quality toast left the screen (expired or dismissed).
        case qualityClosed
        case action(String)
        case serverAppeared
        case serverVanished
    }

    struct ShowError: Error, CustomStringConvertible {
        var description: String
    }

    /// libnotify's own loop thread.
    static let loop = MainLoopThread(name: "lifeline-notify")

    private var loop: MainLoopThread { Self.loop }
    private let events: AsyncStream<Event>.Continuation
    /// The outage toast on screen (a `NotifyNotification *`), and a back-online one.
    private var current: UnsafeMutablePointer<NotifyNotification>?
    private var transient: UnsafeMutablePointer<NotifyNotification>?
    /// The quality toast, a notification of its own so it never replaces the outage toast.
    private var quality: UnsafeMutablePointer<NotifyNotification>?
    private var watch: guint = 0
    /// Set by `shutdown`: what is queued after it shows nothing.
    private var stopped = false
    /// What the server says about itself, asked once per server (a restarted one may be another).
    private var server: ToastServer?

    init(events: AsyncStream<Event>.Continuation) {
        self.events = events
        // Queued, not awaited: the first event says whether a server is there.
        loop.perform { [self] in
            if notify_is_initted() == 0 { _ = notify_init("Lifeline") }
            // GDBus would end the whole daemon (SIGTERM, exit 0) when the session bus
            // goes; what to do then is the daemon's call, not the toast's.
            if let session = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) {
                g_dbus_connection_set_exit_on_close(session, 0)
                lifeline_g_object_unref(UnsafeMutableRawPointer(session))
            }
            watch = g_bus_watch_name(
                G_BUS_TYPE_SESSION, "org.freedesktop.Notifications", G_BUS_NAME_WATCHER_FLAGS_NONE,
                { _, _, _, data in
                    let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
                    me.server = nil
                    me.events.yield(.serverAppeared)
                },
                { _, _, data in
                    let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
                    me.server = nil
                    me.events.yield(.serverVanished)
                },
                Unmanaged.passRetained(self).toOpaque(),
                { data in Unmanaged<Notifier>.fromOpaque(data!).release() })
        }
    }

    /// Shows `toast` as the outage toast: a new notification when `new`, else the
    /// one on screen updated in place (same id, libnotify's `replaces_id`).
    func show(_ toast: Toast, new: Bool) async throws {
        try await loop.run { [self] in
            if stopped { return }
            if new || current == nil {
                drop(&current)
                current = notify_notification_new("Lifeline", nil, nil)
                connectClosed(current!)
            }
            try present(current!, toast)
        }
    }

    /// "Back online": the outage toast, when it is up, becomes it in place (a
    /// close-then-new would leave it on screen where a server ignores the close);
    /// otherwise a new short toast. Either way it is no longer the outage toast.
    func showBackOnline(_ toast: Toast) async throws {
        try await loop.run { [self] in
            if stopped { return }
            drop(&transient)
            let n = current ?? notify_notification_new("Lifeline", nil, nil)!
            current = nil  // its expiry is no dismissal of anything
            transient = n
            try present(n, toast, transient: true)
        }
    }

    /// Shows the quality toast, a new notification beside any outage toast.
    func showQuality(_ toast: Toast) async throws {
        try await loop.run { [self] in
            if stopped { return }
            closeQualityOnLoop()
            let n = notify_notification_new("Lifeline", nil, nil)!
            quality = n
            connectClosed(n)
            try present(n, toast)
        }
    }

    /// Closes the quality toast, if one is up.
    func closeQuality() async {
        _ = try? await loop.run { [self] in closeQualityOnLoop() }
    }

    /// Closes the outage toast, if one is up.
    func close() async {
        _ = try? await loop.run { [self] in closeOnLoop() }
    }

    /// Takes the toast down and stops listening (daemon exit): a toast must not
    /// outlive the daemon that keeps it true. A hung server would hold the close
    /// for 25 s; the daemon waits at most `limit` for it.
    func shutdown(waitingAtMost limit: Duration) async {
        let done = ResumeOnce<Void>()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            done.set(c)
            loop.perform { [self] in
                stopped = true
                closeOnLoop()
                closeQualityOnLoop()
                drop(&transient)
                if watch != 0 { g_bus_unwatch_name(watch) }
                watch = 0
                done.resume(())
            }
            // Unstructured, so a cancelled caller still waits for the close.
            Task {
                try? await Task.sleep(for: limit)
                done.resume(())
            }
        }
        events.finish()
    }

    // MARK: On the loop thread

    private func closeOnLoop() {
        guard let n = current else { return }
        current = nil  // a `closed` signal for it is ours, not the user's
        notify_notification_close(n, nil)
        lifeline_g_object_unref(n)
    }

    private func closeQualityOnLoop() {
        guard let n = quality else { return }
        quality = nil  // its `closed` signal is ours
        notify_notification_close(n, nil)
        lifeline_g_object_unref(n)
    }

    private func present(_ n: UnsafeMutablePointer<NotifyNotification>, _ toast: Toast, transient: Bool = false) throws {
        let server = server ?? Self.askServer()
        if server.isKnown { self.server = server }
        let markup = server.readsMarkup
        notify_notification_update(n, ToastText.summary(toast.summary, markup: markup),
                                   ToastText.body(toast.body, markup: markup), toast.icon)
        // Hints are chosen anew for every call: a tag sent with the first show
        // must not go out again with an update in place.
        notify_notification_clear_hints(n)
        notify_notification_set_urgency(n, NotifyUrgency(UInt32(toast.urgency.rawValue)))
        notify_notification_set_timeout(n, toast.timeout)
        notify_notification_set_category(n, toast.category)
        if transient { lifeline_notify_set_bool_hint(n, "transient", 1) }
        if let tag = server.stackingHint(replacing: lifeline_notify_id(n) != 0) {
            lifeline_notify_set_string_hint(n, tag, "lifeline")
        }
        notify_notification_clear_actions(n)
        for action in server.actions(for: toast) {
            notify_notification_add_action(n, action.key, action.label, { _, action, data in
                let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
                me.events.yield(.action(action.map { String(cString: $0) } ?? ""))
            }, Unmanaged.passRetained(self).toOpaque(), { data in
                Unmanaged<Notifier>.fromOpaque(data!).release()
            })
        }
        var error: UnsafeMutablePointer<GError>?
        if notify_notification_show(n, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            throw ShowError(description: message)
        }
    }

    /// GetServerInformation and GetCapabilities (libnotify's own calls).
    private static func askServer() -> ToastServer {
        var name: UnsafeMutablePointer<CChar>?
        var vendor: UnsafeMutablePointer<CChar>?
        var version: UnsafeMutablePointer<CChar>?
        var spec: UnsafeMutablePointer<CChar>?
        _ = notify_get_server_info(&name, &vendor, &version, &spec)
        defer { for s in [name, vendor, version, spec] { g_free(s) } }
        return ToastServer(name: name.map { String(cString: $0) } ?? "", capabilities: serverCapabilities())
    }

    /// GetCapabilities.
    private static func serverCapabilities() -> Set<String> {
        var caps = Set<String>()
        let list = notify_get_server_caps()
        var c = list
        while let node = c {
            if let s = node.pointee.data { caps.insert(String(cString: s.assumingMemoryBound(to: CChar.self))) }
            c = node.pointee.next
        }
        g_list_free_full(list, g_free)
        return caps
    }

    private func connectClosed(_ n: UnsafeMutablePointer<NotifyNotification>) {
        _ = lifeline_notify_connect_closed(n, { n, data in
            let me = Unmanaged<Notifier>.fromOpaque(data!).takeUnretainedValue()
            // Ours closing by `close()` or `closeQuality()` was cleared first.
            guard let n else { return }
            // The quality toast is kept until replaced or closed: closing a gone one is harmless.
            if n == me.quality {
                me.events.yield(.qualityClosed)
                return
            }
            guard n == me.current else { return }
            let reason: ToastPolicy.CloseReason = switch notify_notification_get_closed_reason(n) {
            case 1: .expired
            case 2: .dismissedByUser
            case 3: .closedByCall
            default: .undefined
            }
            me.events.yield(.closed(reason))
        }, Unmanaged.passRetained(self).toOpaque(), { data, _ in
            Unmanaged<Notifier>.fromOpaque(data!).release()
        })
    }

    private func drop(_ n: inout UnsafeMutablePointer<NotifyNotification>?) {
        if let old = n { lifeline_g_object_unref(old) }
        n = nil
    }
}
