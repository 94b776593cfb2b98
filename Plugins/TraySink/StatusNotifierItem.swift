import CDbusmenu
import CGLib
import LifelineGLib

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
/// name watch (NameOwnerChanged): each new owner gets a registration.
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
    private var menu: TrayMenu?
    private var look: TrayLook
    private var closed = false

    init(events: AsyncStream<TrayEvent>.Continuation, look: TrayLook) {
        self.events = events
        self.look = look
        loop.perform { [self] in start() }
    }

    /// Shows `look`, and tells hosts what changed; on a `transition`, every
    /// signal, so that a host that missed one still redraws the whole item.
    func show(_ look: TrayLook, transition: Bool) {
        loop.perform { [self] in apply(look, transition: transition) }
    }

    func setOutages(_ lines: [String]) {
        loop.perform { [self] in menu?.setOutages(lines) }
    }

    /// Takes the icon and its menu off the bus. Nothing here waits on a host.
    func close() async {
        _ = try? await loop.run { [self] in closeOnLoop() }
        events.finish()
    }

    // MARK: On the loop thread

    private func start() {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            events.yield(.noBus(Self.message(error)))
            return
        }
        // GDBus would end the whole daemon when the session bus goes; that is
        // the daemon's call, not the tray's.
        g_dbus_connection_set_exit_on_close(c, 0)
        connection = c
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
            return
        }
        menu = TrayMenu(events: events)
        menu?.setMuted(look.muted)
        menu?.setSignIn(look.signIn)
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
        if watch != 0 { g_bus_unwatch_name(watch) }
        watch = 0
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
