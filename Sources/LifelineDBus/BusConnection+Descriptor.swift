import CDBus

extension BusConnection {
    /// The connection's socket, for a client that waits on it in its own `poll`
    /// beside other descriptors (a child process, signals), then reads with
    /// `readWrite(timeoutMs: 0)`. Nil when libdbus has none (not connected).
    public var fileDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(raw, &fd) != 0 && fd >= 0 ? fd : nil
    }
}
