import Glibc

/// Where the system bus is, for the monitors that read NetworkManager and logind.
public enum SystemBus {
    /// `DBUS_SYSTEM_BUS_ADDRESS` when set (tests point it at a private bus that
    /// plays the system bus), else the well-known socket.
    public static func address() -> String {
        if let p = getenv("DBUS_SYSTEM_BUS_ADDRESS"), p.pointee != 0 { return String(cString: p) }
        return "unix:path=/run/dbus/system_bus_socket"
    }

    /// The longest message a system-bus connection of the daemon takes. What
    /// NetworkManager and logind send is a few KiB; another user's 30 MiB
    /// signal ends the connection (reopened at once) instead of costing
    /// twice its size in memory before its sender can even be checked.
    public static let longestMessage = 1 << 20

    /// A connection to the system bus at `address`, refusing messages longer
    /// than `longestMessage`.
    public static func open(_ address: String) async throws(BusError) -> BusConnection {
        let connection = try await BusConnection.open(address: address)
        connection.refuseMessages(longerThan: longestMessage)
        return connection
    }
}
