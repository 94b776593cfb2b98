import CDBus

/// A D-Bus error: a `DBusError` from libdbus, an error reply from a peer, or
/// one this wrapper raises before calling into libdbus (invalid names), under
/// its D-Bus error name so a method handler can send it back as is.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.freedesktop.DBus.Error.ServiceUnknown`.
    public var name: String
    public var message: String

    public init(name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// A caller's string as it may appear in an error reply or a log line: at
    /// most `limit` characters, with control and format characters written as
    /// `\u{…}`. A peer then makes neither an answer a megabyte long nor a
    /// terminal that prints it misbehave.
    public static func shown(_ s: String, limit: Int = 64) -> String {
        var out = ""
        var count = 0
        for scalar in s.unicodeScalars {
            if count == limit { return out + "…" }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out
    }

    /// Takes the contents of a set `DBusError` and frees it.
    static func take(_ error: inout DBusError) -> BusError {
        defer { dbus_error_free(&error) }
        let name = error.name.map { String(cString: $0) } ?? Self.failed
        let message = error.message.map { String(cString: $0) } ?? ""
        return BusError(name: name, message)
    }

    /// Runs a libdbus function that reports through a `DBusError *`.
    static func check<T>(_ body: (UnsafeMutablePointer<DBusError>) -> T) throws(BusError) -> T {
        var error = DBusError()
        dbus_error_init(&error)
        let result = body(&error)
        if dbus_error_is_set(&error) != 0 { throw take(&error) }
        return result
    }

    // The standard names (org.freedesktop.DBus.Error.*) this package sends or checks for.
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let timeout = "org.freedesktop.DBus.Error.Timeout"
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
}
