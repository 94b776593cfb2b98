import CDBus
import CGLib
import LifelineGLib
import Synchronization

/// Runs one libdbus connection inside a GLib main context, like dbus-glib's
/// `dbus_connection_setup_with_g_main`: each enabled `DBusWatch` is a unix-fd
/// source, each enabled `DBusTimeout` a timeout source, libdbus wakes the
/// context when it queues outgoing data from elsewhere, and an idle job
/// dispatches while the connection says data remains.
///
/// Every callback here runs on the loop thread: `BusConnection` makes all
/// libdbus calls there once attached, and libdbus calls these functions from
/// inside those calls.
final class Glue: @unchecked Sendable {
    let loop: MainLoopThread
    private let connection: OpaquePointer
    private let dispatchQueued = Atomic<Bool>(false)

    init(loop: MainLoopThread, connection: OpaquePointer) {
        self.loop = loop
        self.connection = connection
    }

    /// Installs the functions; call on the loop thread.
    func install() {
        // libdbus owns one reference per set of functions and drops it with the connection.
        var me: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
        let release: DBusFreeFunction = { data in Unmanaged<Glue>.fromOpaque(data!).release() }

        dbus_connection_set_watch_functions(connection, { watch, data in
            let glue = Unmanaged<Glue>.fromOpaque(data!).takeUnretainedValue()
            let box = WatchBox(watch: watch!, glue: glue)
            dbus_watch_set_data(watch, Unmanaged.passRetained(box).toOpaque(), { data in
                let box = Unmanaged<WatchBox>.fromOpaque(data!).takeRetainedValue()
                box.stop()
            })
            box.update()
            return 1
        }, { watch, _ in
            // Drops the box (its free function stops the source).
            dbus_watch_set_data(watch, nil, nil)
        }, { watch, _ in
            guard let data = dbus_watch_get_data(watch) else { return }
            Unmanaged<WatchBox>.fromOpaque(data).takeUnretainedValue().update()
        }, me, release)

        dbus_connection_set_timeout_functions(connection, { timeout, data in
            let glue = Unmanaged<Glue>.fromOpaque(data!).takeUnretainedValue()
            let box = TimeoutBox(timeout: timeout!, glue: glue)
            dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), { data in
                let box = Unmanaged<TimeoutBox>.fromOpaque(data!).takeRetainedValue()
                box.stop()
            })
            box.update()
            return 1
        }, { timeout, _ in
            dbus_timeout_set_data(timeout, nil, nil)
        }, { timeout, _ in
            guard let data = dbus_timeout_get_data(timeout) else { return }
            Unmanaged<TimeoutBox>.fromOpaque(data).takeUnretainedValue().update()
        }, me, release)

        dbus_connection_set_wakeup_main_function(connection, { data in
            let glue = Unmanaged<Glue>.fromOpaque(data!).takeUnretainedValue()
            g_main_context_wakeup(glue.loop.context)
        }, me, release)

        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            // Called with libdbus locks held: only schedule here, dispatch later.
            guard status == DBUS_DISPATCH_DATA_REMAINS else { return }
            Unmanaged<Glue>.fromOpaque(data!).takeUnretainedValue().scheduleDispatch()
        }, me, release)

        // Messages may have arrived before the functions were installed.
        scheduleDispatch()
    }

    func scheduleDispatch() {
        guard !dispatchQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The job holds a reference: the connection may be closed and released
        // before it runs (dbus_connection_ref is atomic, safe under libdbus' locks).
        dbus_connection_ref(connection)
        loop.perform { [self] in
            dispatchQueued.store(false, ordering: .releasing)
            while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(connection)
            }
            dbus_connection_unref(connection)
        }
    }
}

/// A `DBusWatch` and the GLib source watching its fd while it is enabled.
private final class WatchBox: @unchecked Sendable {
    private let watch: OpaquePointer
    private let glue: Glue
    private var source: LoopSource?

    init(watch: OpaquePointer, glue: Glue) {
        self.watch = watch
        self.glue = glue
    }

    func update() {
        stop()
        guard dbus_watch_get_enabled(watch) != 0 else { return }
        let flags = dbus_watch_get_flags(watch)
        var events: MainLoopThread.IOEvents = []
        if flags & LIFELINE_DBUS_WATCH_READABLE != 0 { events.insert(.readable) }
        if flags & LIFELINE_DBUS_WATCH_WRITABLE != 0 { events.insert(.writable) }
        source = glue.loop.addWatch(fd: dbus_watch_get_unix_fd(watch), events: events) { [weak self] happened in
            guard let self else { return false }
            var flags: UInt32 = 0
            if happened.contains(.readable) { flags |= LIFELINE_DBUS_WATCH_READABLE }
            if happened.contains(.writable) { flags |= LIFELINE_DBUS_WATCH_WRITABLE }
            if happened.contains(.error) { flags |= LIFELINE_DBUS_WATCH_ERROR }
            if happened.contains(.hangup) { flags |= LIFELINE_DBUS_WATCH_HANGUP }
            let glue = self.glue
            // May remove this very watch (on hang-up): the source is then
            // destroyed and this callback is not called again.
            _ = dbus_watch_handle(self.watch, flags)
            glue.scheduleDispatch()
            return true
        }
    }

    func stop() {
        source?.cancel()
        source = nil
    }
}

/// A `DBusTimeout` and its GLib timeout source while it is enabled.
private final class TimeoutBox: @unchecked Sendable {
    private let timeout: OpaquePointer
    private let glue: Glue
    private var source: LoopSource?

    init(timeout: OpaquePointer, glue: Glue) {
        self.timeout = timeout
        self.glue = glue
    }

    func update() {
        stop()
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = Duration.milliseconds(dbus_timeout_get_interval(timeout))
        source = glue.loop.addTimeout(interval) { [weak self] in
            guard let self else { return false }
            let glue = self.glue
            _ = dbus_timeout_handle(self.timeout)
            glue.scheduleDispatch()
            return true
        }
    }

    func stop() {
        source?.cancel()
        source = nil
    }
}
