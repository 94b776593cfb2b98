import Glibc

/// Where the system bus is, for the monitors that read NetworkManager and logind.
public enum SystemBus {
    /// `DBUS_SYSTEM_BUS_ADDRESS` when set (tests point it at a private bus that
    /// plays the system bus), else the well-known socket.
    public static func address() -> String {
        if let p = getenv("DBUS_SYSTEM_BUS_ADDRESS"), p.pointee != 0 { return String(cString: p) }
        return "unix:path=/run/dbus/system_bus_socket"
    }
}
