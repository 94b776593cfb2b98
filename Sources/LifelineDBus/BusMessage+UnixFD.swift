import CDBus

extension BusMessage {
    /// The file descriptor a reply carries as its first argument (`h`), e.g.
    /// logind's inhibitor lock, which holds for as long as the descriptor is open.
    /// The caller owns the returned descriptor (libdbus hands out a duplicate)
    /// and must close it. Throws `InvalidArgs` when the first argument is not a
    /// descriptor (a peer answering with something else).
    public func takeUnixFD() throws(BusError) -> Int32 {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == LIFELINE_DBUS_TYPE_UNIX_FD
        else {
            throw BusError(name: BusError.invalidArgs, "expected a file descriptor, got '\(signature)'")
        }
        var fd: Int32 = -1
        dbus_message_iter_get_basic(&iter, &fd)
        guard fd >= 0 else { throw BusError(name: BusError.invalidArgs, "the file descriptor did not arrive") }
        return fd
    }
}
