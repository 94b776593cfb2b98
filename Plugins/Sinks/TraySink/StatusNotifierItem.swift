import CDbusmenu
import CGLib
import Glibc
import LifelineCore
import LifelineDBus
import LifelineGLib
import LifelinePlatform
import Synchronization

/// The tray icon on the session bus: an `org.kde.StatusNotifierItem` at
/// `/StatusNotifierItem`, registered with whatever owns
/// `org.kde.StatusNotifierWatcher` (Plasma, waybar, Xfce's panel, GNOME's
/// AppIndicator extension), and its menu beside it.
///
/// It runs on a GLib loop thread of its own. libdbusmenu-glib speaks GDBus on
/// the context that is thread-default where it starts, so the item is exported
/// with GDBus too, on the same thread and the same (shared session) connection:
/// the watcher learns one unique name, and the `Menu` path is on it. Nothing on
/// this loop ever waits for a host: registration is an asynchronous call,
/// signals are sent and forgotten, and the daemon's own D-Bus interface and the
/// toast run on other loops, so a host that hangs delays no one but itself.
///
/// A watcher that appears later, restarts or never exists is followed with a
/// name watch (NameOwnerChanged): each new owner gets a registration. A session
/// bus that goes away (or is not there yet) is tried again after a pause that
/// grows from 250 ms to 10 s, as the daemon's own D-Bus service does, or, when
/// its socket file is missing, as soon as the file is created; the item and
/// its menu are put on the new bus, and registered with its watcher.
final class StatusNotifierItem: @unchecked Sendable {
    // @unchecked: the mutable state below is touched on `StatusNotifierItem.loop` only.
    /// On GLib's default context: libdbusmenu-glib queues its signals and the
    /// host's clicks there (g_idle_add), not on the thread-default context.
    static let loop = MainLoopThread(nameOnDefaultContext: "lifeline-tray")
    static let path = "/StatusNotifierItem"
    static let interface = "org.kde.StatusNotifierItem"
    static let watcherName = "org.kde.StatusNotifierWatcher"

    private var loop: MainLoopThread { Self.loop }
    private let events: AsyncStream<TrayEvent>.Continuation
    private var connection: OpaquePointer?
    private var registration: guint = 0
    private var watch: guint = 0
    private var closedHandler: gulong = 0
    private var retry: LoopSource?
    private var socketWait: Task<Void, Never>?
    private var pause = firstPause
    static let firstPause = Duration.milliseconds(250)
    static let longestPause = Duration.seconds(10)
    private var menu: TrayMenu?
    private var look: TrayLook
    /// The "Recent outages" lines, for a menu made again on a new bus.
    private var outages: [String] = []
    private let readingOutages = Mutex(false)
    private var closed = false

    init(events: AsyncStream<TrayEvent>.Continuation, look: TrayLook) {
        self.events = events
        self.look = look
        loop.perform { [self] in connect() }
    }

    /// Shows `look`, and tells hosts what changed; on a `transition`, every
    /// signal, so that a host that missed one still redraws the whole item.
    func show(_ look: TrayLook, transition: Bool) {
        loop.perform { [self] in apply(look, transition: transition) }
    }

    func setOutages(_ lines: [String]) {
        loop.perform { [self] in
            outages = lines
            menu?.setOutages(lines)
        }
    }

    /// False while the log is already being read for the menu.
    func startReadingOutages() -> Bool {
        readingOutages.withLock { reading in
            defer { reading = true }
            return !reading
        }
    }

    func doneReadingOutages() { readingOutages.withLock { $0 = false } }

    /// Takes the icon and its menu off the bus. Nothing here waits on a host.
    func close() async {
        _ = try? await loop.run { [self] in closeOnLoop() }
        events.finish()
    }

    // MARK: On the loop thread

    /// Puts the item on the session bus, or tries again after a pause.
    private func connect() {
        guard !closed else { return }
        if start() {
            pause = Self.firstPause
            return
        }
        teardown()
        tryAgainLater()
    }

    private func tryAgainLater() {
        // A bus whose socket file is not there is waited for (inotify on its
        // folder), not polled: a session without a bus never wakes the tray.
        if let address = BusConnection.sessionBusAddress(), let socket = SystemBus.socketPath(address),
           access(socket, F_OK) != 0 {
            socketWait = Task { [self] in
                await FolderWatch.waitUntilExists(socket, fallback: Self.longestPause)
                loop.perform { [self] in
                    socketWait = nil
                    pause = Self.firstPause
                    connect()
                }
            }
            return
        }
        retry = loop.addTimeout(pause) { [self] in
            retry = nil
            connect()
            return false
        }
        pause = min(pause * 2, Self.longestPause)
    }

    /// The bus went away: everything on it is dropped (the last reference to
    /// GDBus's shared connection with it, so the next attempt makes a new one).
    private func lost() {
        events.yield(.busLost)
        teardown()
        if !closed { tryAgainLater() }
    }

    /// True when the item is on the bus, its menu beside it, and the watcher followed.
    private func start() -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            events.yield(.noBus(Self.message(error)))
            return false
        }
        connection = c
        // Still held somewhere after a loss: GDBus hands the closed one out again.
        guard g_dbus_connection_is_closed(c) == 0 else {
            events.yield(.noBus("the session bus connection is closed"))
            return false
        }
        // GDBus would end the whole daemon when the session bus goes; that is
        // the daemon's call, not the tray's.
        g_dbus_connection_set_exit_on_close(c, 0)
        closedHandler = lifeline_dbus_connection_connect_closed(c, { _, _, _, data in
            Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeUnretainedValue().lost()
        }, Unmanaged.passRetained(self).toOpaque(), { data, _ in Unmanaged<StatusNotifierItem>.fromOpaque(data!).release() })
        registration = lifeline_dbus_register_object(
            c, Self.path, Self.interfaceInfo,
            { _, _, _, _, method, parameters, invocation, data in
                let me = Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeUnretainedValue()
                me.call(method.map { String(cString: $0) } ?? "", parameters)
                g_dbus_method_invocation_return_value(invocation, nil)
            },
            { _, _, _, _, property, _, data in
                let me = Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeUnretainedValue()
                return me.value(of: property.map { String(cString: $0) } ?? "")
            },
            Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<StatusNotifierItem>.fromOpaque(data!).release() },
            &error)
        if registration == 0 {
            events.yield(.noBus("cannot export \(Self.path): \(Self.message(error))"))
            return false
        }
        menu = TrayMenu(events: events)
        menu?.setMuted(look.muted)
        menu?.setOutages(outages)
        menu?.setSignIn(look.signIn)
        menu?.setVenue(look.venue)
        watch = g_bus_watch_name_on_connection(
            c, Self.watcherName, G_BUS_NAME_WATCHER_FLAGS_NONE,
            { _, _, _, data in
                let me = Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeUnretainedValue()
                me.events.yield(.watcherAppeared)
                me.register()
            },
            { _, _, data in
                let me = Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeUnretainedValue()
                me.events.yield(.watcherVanished)
            },
            Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<StatusNotifierItem>.fromOpaque(data!).release() })
        return true
    }

    /// RegisterStatusNotifierItem with our object path: the watcher takes our
    /// unique name from the message. Asynchronous: a hung watcher holds nothing.
    private func register() {
        guard let connection, !closed else { return }
        g_dbus_connection_call(
            connection, Self.watcherName, "/StatusNotifierWatcher", Self.watcherName, "RegisterStatusNotifierItem",
            lifeline_variant_tuple_string(Self.path), nil, G_DBUS_CALL_FLAGS_NONE, -1, nil,
            { source, result, data in
                let me = Unmanaged<StatusNotifierItem>.fromOpaque(data!).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                    g_variant_unref(reply)
                    me.events.yield(.registered)
                } else {
                    me.events.yield(.registrationFailed(StatusNotifierItem.message(error)))
                }
            },
            Unmanaged.passRetained(self).toOpaque())
    }

    private func apply(_ new: TrayLook, transition: Bool) {
        let old = look
        look = new
        menu?.setMuted(new.muted)
        menu?.setSignIn(new.signIn)
        menu?.setVenue(new.venue)
        guard connection != nil, registration != 0 else { return }
        if transition { emit("NewTitle") }
        if transition || new.icon != old.icon {
            emit("NewIcon")
            emit("NewAttentionIcon")
        }
        if transition || new.status != old.status { emit("NewStatus", lifeline_variant_tuple_string(new.status)) }
        if transition || new.heading != old.heading || new.text != old.text { emit("NewToolTip") }
    }

    private func emit(_ signal: String, _ arguments: OpaquePointer? = nil) {
        guard let connection else { return }
        // Sent and forgotten: a host that does not read them only fills its own queue.
        _ = g_dbus_connection_emit_signal(connection, nil, Self.path, Self.interface, signal, arguments, nil)
    }

    private func call(_ method: String, _ parameters: OpaquePointer?) {
        switch method {
        case "Activate":
            events.yield(.activate)
        default:
            // SecondaryActivate (a middle click), ContextMenu (hosts that draw no
            // menu of their own ask us to; the menu is ours through dbusmenu) and
            // Scroll do nothing: there is nothing safe to guess.
            break
        }
    }

    private func value(of property: String) -> OpaquePointer? {
        switch property {
        case "Category": return g_variant_new_string("SystemServices")
        case "Id": return g_variant_new_string("lifeline")
        case "Title": return g_variant_new_string(TrayText.title)
        case "Status": return g_variant_new_string(look.status)
        case "WindowId": return g_variant_new_int32(0)
        case "IconName", "AttentionIconName": return g_variant_new_string(look.icon)
        case "ToolTip": return lifeline_variant_tooltip(look.icon, look.heading, look.text)
        case "ItemIsMenu": return g_variant_new_boolean(0)
        case "Menu": return g_variant_new_object_path(TrayMenu.path)
        default: return nil
        }
    }

    private func closeOnLoop() {
        if closed { return }
        closed = true
        retry?.cancel()
        retry = nil
        socketWait?.cancel()
        socketWait = nil
        teardown()
    }

    /// Takes everything off the connection and lets it go.
    private func teardown() {
        if watch != 0 { g_bus_unwatch_name(watch) }
        watch = 0
        if let connection, closedHandler != 0 { g_signal_handler_disconnect(UnsafeMutableRawPointer(connection), closedHandler) }
        closedHandler = 0
        if let connection, registration != 0 { g_dbus_connection_unregister_object(connection, registration) }
        registration = 0
        menu?.close()
        menu = nil
        if let connection { lifeline_dbusmenu_object_unref(UnsafeMutableRawPointer(connection)) }
        connection = nil
    }

    private static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }

    /// The interface as hosts read it. Parsed once, on the loop, and never changed.
    nonisolated(unsafe) private static let interfaceInfo: UnsafeMutablePointer<GDBusInterfaceInfo> = {
        let node = g_dbus_node_info_new_for_xml(introspection, nil)!
        return g_dbus_node_info_lookup_interface(node, interface)!
    }()

    private static let introspection = """
        <node>
          <interface name="org.kde.StatusNotifierItem">
            <property name="Category" type="s" access="read"/>
            <property name="Id" type="s" access="read"/>
            <property name="Title" type="s" access="read"/>
            <property name="Status" type="s" access="read"/>
            <property name="WindowId" type="i" access="read"/>
            <property name="IconName" type="s" access="read"/>
            <property name="AttentionIconName" type="s" access="read"/>
            <property name="ToolTip" type="(sa(iiay)ss)" access="read"/>
            <property name="ItemIsMenu" type="b" access="read"/>
            <property name="Menu" type="o" access="read"/>
            <method name="ContextMenu"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="Activate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="SecondaryActivate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
            <method name="Scroll"><arg name="delta" type="i" direction="in"/><arg name="orientation" type="s" direction="in"/></method>
            <signal name="NewTitle"/>
            <signal name="NewIcon"/>
            <signal name="NewAttentionIcon"/>
            <signal name="NewToolTip"/>
            <signal name="NewStatus"><arg name="status" type="s"/></signal>
          </interface>
        </node>
        """
}
