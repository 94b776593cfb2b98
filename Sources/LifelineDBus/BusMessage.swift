import CDBus
import Glibc

/// Owns one `DBusMessage` (a reference; `deinit` drops it). Arguments go in and
/// out as `BusValue`s through `DBusMessageIter`. Every name and signature is
/// validated before it reaches libdbus, whose failed checks abort the process.
public final class BusMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over a reference the caller owns (a `dbus_message_new_*` result).
    init(taking raw: OpaquePointer) { self.raw = raw }

    /// Adds a reference of its own (a message libdbus lends to a callback).
    init(retaining raw: OpaquePointer) {
        self.raw = raw
        dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }

    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal, invalid
    }

    // MARK: Construction

    public static func methodCall(
        destination: String?, path: String, interface: String?, member: String
    ) throws(BusError) -> BusMessage {
        if let destination { try Validate.busName(destination) }
        try Validate.path(path)
        if let interface { try Validate.interface(interface) }
        try Validate.member(member)
        guard let raw = dbus_message_new_method_call(destination, path, interface, member) else { throw .oom }
        return BusMessage(taking: raw)
    }

    public static func signal(path: String, interface: String, member: String) throws(BusError) -> BusMessage {
        try Validate.path(path)
        try Validate.interface(interface)
        try Validate.member(member)
        guard let raw = dbus_message_new_signal(path, interface, member) else { throw .oom }
        return BusMessage(taking: raw)
    }

    /// A message from its wire form, as libdbus reads one from a socket (a
    /// test's or a fuzzer's bytes); throws when libdbus finds it malformed.
    public static func demarshal(_ bytes: [UInt8]) throws(BusError) -> BusMessage {
        let raw = try BusError.check { error in
            bytes.withUnsafeBytes { buffer in
                dbus_message_demarshal(buffer.baseAddress?.assumingMemoryBound(to: CChar.self),
                                       Int32(clamping: buffer.count), error)
            }
        }
        guard let raw else { throw BusError(name: BusError.invalidArgs, "not a D-Bus message") }
        return BusMessage(taking: raw)
    }

    /// The method return for this method call.
    public func methodReturn() throws(BusError) -> BusMessage {
        guard kind == .methodCall, let raw = dbus_message_new_method_return(raw) else { throw .oom }
        return BusMessage(taking: raw)
    }

    /// An error reply to this method call.
    public func errorReply(_ error: BusError) throws(BusError) -> BusMessage {
        let name = (try? Validate.errorName(error.name)) != nil ? error.name : BusError.failed
        guard kind == .methodCall, let raw = dbus_message_new_error(raw, name, error.message) else { throw .oom }
        return BusMessage(taking: raw)
    }

    // MARK: Header

    public var kind: Kind {
        switch dbus_message_get_type(raw) {
        case LIFELINE_DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case LIFELINE_DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case LIFELINE_DBUS_MESSAGE_TYPE_ERROR: .error
        case LIFELINE_DBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: .invalid
        }
    }

    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    /// The caller asked for no reply (`NO_REPLY_EXPECTED`).
    public var noReply: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// Whether the bus may start the destination to deliver a method call (default true).
    public var autoStart: Bool {
        get { dbus_message_get_auto_start(raw) != 0 }
        set { dbus_message_set_auto_start(raw, newValue ? 1 : 0) }
    }

    /// Whether this is `interface.member` (a quick test for signal handlers).
    public func `is`(interface: String, member: String) -> Bool {
        self.interface == interface && self.member == member
    }

    /// Whether this is `interface.member` with exactly `signature`, at `path`
    /// when one is given. Reads the header only: a handler asks this before it
    /// reads a single argument, so a message of any other shape costs nothing.
    public func `is`(interface: String, member: String, signature: String, path: String? = nil) -> Bool {
        self.is(interface: interface, member: member) && self.signature == signature
            && (path == nil || self.path == path)
    }

    /// An error reply as a Swift error (nil for anything else).
    public var asError: BusError? {
        guard kind == .error else { return nil }
        let text = (try? arguments())?.first?.string ?? ""
        return BusError(name: errorName ?? BusError.failed, text)
    }

    // MARK: Arguments

    /// Appends `values` in order.
    public func append(_ values: [BusValue]) throws(BusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in values {
            // A whole-value check first: libdbus aborts on a malformed container signature.
            try Validate.singleSignature(value.signature)
            try Self.write(value, into: &iter)
        }
    }

    public func append(_ values: BusValue...) throws(BusError) { try append(values) }

    /// Every argument, in order, read within `bounds`. Throws `InvalidArgs`
    /// for a type this package does not read (unix fds), and `LimitsExceeded`
    /// past a bound: a peer's message is turned into values only as far as the
    /// daemon chose, never as far as the peer chose (the system bus passes
    /// messages of up to 128 MiB, and every value read is a heap box here).
    public func arguments(within bounds: ArgumentBounds = .standard) throws(BusError) -> [BusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        var budget = Budget(bounds)
        return try Self.readAll(&iter, &budget)
    }

    private static func write(_ value: BusValue, into iter: inout DBusMessageIter) throws(BusError) {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_BYTE, &v)
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_BOOLEAN, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_INT16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_UINT16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_INT32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_UINT32, &v)
        case .int64(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_INT64, &v)
        case .uint64(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_UINT64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(&iter, LIFELINE_DBUS_TYPE_DOUBLE, &v)
        case .string(let s):
            ok = appendString(Validate.cleanString(s), type: LIFELINE_DBUS_TYPE_STRING, &iter)
        case .objectPath(let s):
            try Validate.path(s)
            ok = appendString(s, type: LIFELINE_DBUS_TYPE_OBJECT_PATH, &iter)
        case .signature(let s):
            try Validate.signature(s)
            ok = appendString(s, type: LIFELINE_DBUS_TYPE_SIGNATURE, &iter)
        case .variant(let inner):
            try container(LIFELINE_DBUS_TYPE_VARIANT, inner.signature, &iter) { (sub) throws(BusError) in
                try write(inner, into: &sub)
            }
        case .array(let element, let items):
            for item in items where item.signature != element {
                throw BusError(name: BusError.invalidArgs, "array of '\(element)' holds a '\(item.signature)'")
            }
            try container(LIFELINE_DBUS_TYPE_ARRAY, element, &iter) { (sub) throws(BusError) in
                for item in items { try write(item, into: &sub) }
            }
        case .dictionary(let k, let v, let entries):
            for e in entries where e.key.signature != k || e.value.signature != v {
                throw BusError(name: BusError.invalidArgs, "dictionary of '\(k)\(v)' holds '\(e.key.signature)\(e.value.signature)'")
            }
            try container(LIFELINE_DBUS_TYPE_ARRAY, "{" + k + v + "}", &iter) { (sub) throws(BusError) in
                for e in entries {
                    try container(LIFELINE_DBUS_TYPE_DICT_ENTRY, nil, &sub) { (entry) throws(BusError) in
                        try write(e.key, into: &entry)
                        try write(e.value, into: &entry)
                    }
                }
            }
        case .structure(let fields):
            try container(LIFELINE_DBUS_TYPE_STRUCT, nil, &iter) { (sub) throws(BusError) in
                for f in fields { try write(f, into: &sub) }
            }
        }
        if ok == 0 { throw .oom }
    }

    private static func appendString(_ s: String, type: Int32, _ iter: inout DBusMessageIter) -> dbus_bool_t {
        s.withCString { p in
            var pointer: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(&iter, type, &pointer)
        }
    }

    private static func container(
        _ type: Int32, _ signature: String?, _ iter: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(BusError) -> Void
    ) throws(BusError) {
        var sub = DBusMessageIter()
        let opened = signature.map { dbus_message_iter_open_container(&iter, type, $0, &sub) }
            ?? dbus_message_iter_open_container(&iter, type, nil, &sub)
        guard opened != 0 else { throw .oom }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw .oom }
    }

    private static func read(_ iter: inout DBusMessageIter, _ budget: inout Budget) throws(BusError) -> BusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        try budget.spend(values: 1, bytes: 0)
        switch type {
        case LIFELINE_DBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case LIFELINE_DBUS_TYPE_BOOLEAN: return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case LIFELINE_DBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case LIFELINE_DBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case LIFELINE_DBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case LIFELINE_DBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case LIFELINE_DBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case LIFELINE_DBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case LIFELINE_DBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case LIFELINE_DBUS_TYPE_STRING: return .string(try readString(&iter, &budget))
        case LIFELINE_DBUS_TYPE_OBJECT_PATH: return .objectPath(try readString(&iter, &budget))
        case LIFELINE_DBUS_TYPE_SIGNATURE: return .signature(try readString(&iter, &budget))
        case LIFELINE_DBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            try budget.descend()
            defer { budget.ascend() }
            return .variant(try read(&sub, &budget))
        case LIFELINE_DBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            try budget.descend()
            defer { budget.ascend() }
            return .structure(try readAll(&sub, &budget))
        case LIFELINE_DBUS_TYPE_ARRAY:
            // Counted by libdbus without a copy: a long array is refused before one element is read.
            try budget.afford(values: Int(dbus_message_iter_get_element_count(&iter)))
            try budget.descend()
            defer { budget.ascend() }
            let full = iterSignature(&iter)  // "a…"
            let element = String(full.dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if dbus_message_iter_get_element_type(&iter) == LIFELINE_DBUS_TYPE_DICT_ENTRY {
                // "{kv…}": a basic key is one character.
                let inner = element.dropFirst().dropLast()
                let key = String(inner.prefix(1)), value = String(inner.dropFirst())
                var entries: [BusValue.DictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == LIFELINE_DBUS_TYPE_DICT_ENTRY {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &entry)
                    let k = try read(&entry, &budget)
                    dbus_message_iter_next(&entry)
                    let v = try read(&entry, &budget)
                    entries.append(.init(k, v))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            return .array(element: element, try readAll(&sub, &budget))
        default:
            throw BusError(name: BusError.invalidArgs, "unsupported argument type '\(UnicodeScalar(UInt8(truncatingIfNeeded: type)))'")
        }
    }

    private static func readAll(_ iter: inout DBusMessageIter, _ budget: inout Budget) throws(BusError) -> [BusValue] {
        var out: [BusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != LIFELINE_DBUS_TYPE_INVALID {
            out.append(try read(&iter, &budget))
            dbus_message_iter_next(&iter)
        }
        return out
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var v = initial
        withUnsafeMutablePointer(to: &v) { dbus_message_iter_get_basic(&iter, $0) }
        return v
    }

    private static func readString(_ iter: inout DBusMessageIter, _ budget: inout Budget) throws(BusError) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { return "" }
        try budget.spend(values: 0, bytes: strlen(p))
        return String(cString: p)
    }

    private static func iterSignature(_ iter: inout DBusMessageIter) -> String {
        guard let p = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }
}

extension BusError {
    static let oom = BusError(name: BusError.noMemory, "out of memory")
}

/// Checks names before they reach libdbus (its failed checks abort).
enum Validate {
    static func path(_ s: String) throws(BusError) {
        try check(s, "object path") { dbus_validate_path($0, $1) }
    }
    static func interface(_ s: String) throws(BusError) {
        try check(s, "interface name") { dbus_validate_interface($0, $1) }
    }
    static func member(_ s: String) throws(BusError) {
        try check(s, "member name") { dbus_validate_member($0, $1) }
    }
    static func busName(_ s: String) throws(BusError) {
        try check(s, "bus name") { dbus_validate_bus_name($0, $1) }
    }
    static func errorName(_ s: String) throws(BusError) {
        try check(s, "error name") { dbus_validate_error_name($0, $1) }
    }
    static func signature(_ s: String) throws(BusError) {
        try check(s, "signature") { dbus_signature_validate($0, $1) }
    }
    static func singleSignature(_ s: String) throws(BusError) {
        try check(s, "single complete type") { dbus_signature_validate_single($0, $1) }
    }

    /// D-Bus strings hold no NUL; a Swift string may.
    static func cleanString(_ s: String) -> String {
        s.utf8.contains(0) ? String(s.unicodeScalars.filter { $0.value != 0 }.map(Character.init)) : s
    }

    private static func check(
        _ s: String, _ what: String,
        _ validate: (UnsafePointer<CChar>, UnsafeMutablePointer<DBusError>) -> dbus_bool_t
    ) throws(BusError) {
        var error = DBusError()
        dbus_error_init(&error)
        let ok = s.utf8.contains(0) ? 0 : s.withCString { validate($0, &error) }
        if ok == 0 {
            let detail = dbus_error_is_set(&error) != 0 ? BusError.take(&error).message : "contains NUL"
            throw BusError(name: BusError.invalidArgs, "invalid \(what) '\(s)': \(detail)")
        }
    }
}
