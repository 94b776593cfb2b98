import CDBus
import Synchronization

/// An object served on the bus: its path and interfaces. The connection adds
/// the standard `Introspectable` and `Properties` interfaces from this
/// description (libdbus itself answers `Peer`), checks each call's signature
/// against it and answers anything unknown with the right D-Bus error.
public final class BusObject: Sendable {
    public let path: String
    public let interfaces: [BusInterface]

    public init(path: String, interfaces: [BusInterface]) {
        self.path = path
        self.interfaces = interfaces
    }

    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let peerInterface = "org.freedesktop.DBus.Peer"

    /// The XML `Introspect` returns.
    public var introspectionXML: String {
        var xml = BusInterface.doctype + "<node>\n"
        xml += Self.standardInterfacesXML
        for i in interfaces { xml += i.xml(indent: "  ") }
        return xml + "</node>\n"
    }

    static let standardInterfacesXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>

        """

    static func nodeXML(children: [String]) -> String {
        var xml = BusInterface.doctype + "<node>\n"
        xml += "  <interface name=\"org.freedesktop.DBus.Introspectable\">\n"
        xml += "    <method name=\"Introspect\">\n      <arg name=\"xml_data\" type=\"s\" direction=\"out\"/>\n    </method>\n"
        xml += "  </interface>\n"
        for c in children { xml += "  <node name=\"\(c)\"/>\n" }
        return xml + "</node>\n"
    }
}

/// One interface: methods (with handlers), read-only properties (with getters) and signals.
public struct BusInterface: Sendable {
    public struct Argument: Sendable {
        public var name: String
        public var signature: String
        public init(_ name: String, _ signature: String) {
            self.name = name
            self.signature = signature
        }
    }

    public struct Method: Sendable {
        public var name: String
        public var inputs: [Argument]
        public var outputs: [Argument]
        /// Called on the loop thread with arguments that match `inputs`; must
        /// answer the call (now or later, from any thread).
        public var handler: @Sendable (MethodCall) -> Void

        public init(_ name: String, inputs: [Argument] = [], outputs: [Argument] = [],
                    handler: @escaping @Sendable (MethodCall) -> Void) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
            self.handler = handler
        }

        var inputSignature: String { inputs.map(\.signature).joined() }
    }

    /// A read-only property; its getter runs on the loop thread.
    public struct Property: Sendable {
        public var name: String
        public var signature: String
        public var get: @Sendable () -> BusValue
        public init(_ name: String, _ signature: String, get: @escaping @Sendable () -> BusValue) {
            self.name = name
            self.signature = signature
            self.get = get
        }
    }

    public struct Signal: Sendable {
        public var name: String
        public var arguments: [Argument]
        public init(_ name: String, _ arguments: [Argument] = []) {
            self.name = name
            self.arguments = arguments
        }
    }

    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// This interface as introspection XML, each line prefixed by `indent`.
    public func xml(indent: String = "") -> String {
        var x = indent + "<interface name=\"\(name)\">\n"
        for m in methods {
            if m.inputs.isEmpty && m.outputs.isEmpty {
                x += indent + "  <method name=\"\(m.name)\"/>\n"
                continue
            }
            x += indent + "  <method name=\"\(m.name)\">\n"
            for a in m.inputs { x += indent + "    <arg name=\"\(a.name)\" type=\"\(a.signature)\" direction=\"in\"/>\n" }
            for a in m.outputs { x += indent + "    <arg name=\"\(a.name)\" type=\"\(a.signature)\" direction=\"out\"/>\n" }
            x += indent + "  </method>\n"
        }
        for s in signals {
            if s.arguments.isEmpty {
                x += indent + "  <signal name=\"\(s.name)\"/>\n"
                continue
            }
            x += indent + "  <signal name=\"\(s.name)\">\n"
            for a in s.arguments { x += indent + "    <arg name=\"\(a.name)\" type=\"\(a.signature)\"/>\n" }
            x += indent + "  </signal>\n"
        }
        for p in properties {
            x += indent + "  <property name=\"\(p.name)\" type=\"\(p.signature)\" access=\"read\"/>\n"
        }
        return x + indent + "</interface>\n"
    }

    /// A stand-alone document with only this interface, like the files under
    /// /usr/share/dbus-1/interfaces.
    public var document: String { Self.doctype + "<node>\n" + xml(indent: "  ") + "</node>\n" }
}

/// A method call being answered. Answer once with `reply` or `fail`, from any
/// thread; a call dropped without an answer is answered with `Failed`, so a
/// caller never waits for its timeout.
public final class MethodCall: Sendable {
    public let message: BusMessage
    /// The arguments, already checked against the method's signature.
    public let arguments: [BusValue]
    private let connection: BusConnection
    private let answered = Atomic<Bool>(false)

    init(message: BusMessage, arguments: [BusValue], connection: BusConnection) {
        self.message = message
        self.arguments = arguments
        self.connection = connection
    }

    public func reply(_ values: [BusValue] = []) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing), !message.noReply else { return }
        do {
            let r = try message.methodReturn()
            try r.append(values)
            connection.send(r)
        } catch {
            // A value this side built wrongly: the caller still gets an answer.
            answered.store(false, ordering: .releasing)
            fail(BusError(name: BusError.failed, "cannot encode the reply: \(error.message)"))
        }
    }

    public func fail(_ error: BusError) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing), !message.noReply else { return }
        if let r = try? message.errorReply(error) { connection.send(r) }
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            fail(BusError(name: BusError.failed, "the method returned no answer"))
        }
    }
}

/// Routes what a connection receives: method calls to exported objects (or an
/// error reply), signals to handlers, the local `Disconnected` signal to
/// disconnect handlers. Runs on the thread that dispatches (the loop thread).
final class Router: @unchecked Sendable {
    /// The connection this router serves; set once before any message arrives.
    var connection: OpaquePointer?
    weak var owner: BusConnection?

    private struct State {
        var objects: [String: BusObject] = [:]
        var signalHandlers: [@Sendable (BusMessage) -> Void] = []
        var disconnectHandlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    func export(_ object: BusObject) { state.withLock { $0.objects[object.path] = object } }
    func addSignalHandler(_ h: @escaping @Sendable (BusMessage) -> Void) { state.withLock { $0.signalHandlers.append(h) } }
    func addDisconnectHandler(_ h: @escaping @Sendable () -> Void) { state.withLock { $0.disconnectHandlers.append(h) } }

    /// True when the message was handled (answered).
    func handle(_ message: BusMessage) -> Bool {
        switch message.kind {
        case .signal:
            if message.path == "/org/freedesktop/DBus/Local", message.is(interface: "org.freedesktop.DBus.Local", member: "Disconnected") {
                let handlers = state.withLock { s in
                    defer { s.disconnectHandlers = [] }
                    return s.disconnectHandlers
                }
                for h in handlers { h() }
                return false
            }
            for h in state.withLock({ $0.signalHandlers }) { h(message) }
            return false
        case .methodCall:
            answer(message)
            return true
        default:
            return false
        }
    }

    private func answer(_ message: BusMessage) {
        guard let owner else { return }
        let path = message.path ?? "/"
        let (object, children) = state.withLock { s in
            (s.objects[path], Self.children(of: path, in: s.objects.keys))
        }
        let interface = message.interface
        let member = message.member ?? ""
        let signature = message.signature
        // What the caller sent, fit to be repeated in an error reply (worked out
        // only for an error: answering a good call stays cheap).
        var shownPath: String { BusError.shown(path) }
        var shownMember: String { BusError.shown(member) }
        var shownSignature: String { BusError.shown(signature) }
        var shownInterface: String? { interface.map { BusError.shown($0) } }

        func fail(_ name: String, _ text: String) {
            MethodCall(message: message, arguments: [], connection: owner).fail(BusError(name: name, text))
        }
        func reply(_ values: [BusValue]) {
            MethodCall(message: message, arguments: [], connection: owner).reply(values)
        }

        if interface == BusObject.introspectableInterface || (interface == nil && member == "Introspect") {
            guard member == "Introspect" else { return fail(BusError.unknownMethod, "no method \(shownMember) in \(BusObject.introspectableInterface)") }
            guard signature.isEmpty else { return fail(BusError.invalidArgs, "Introspect takes no arguments, got '\(shownSignature)'") }
            if let object { return reply([.string(object.introspectionXML)]) }
            if !children.isEmpty { return reply([.string(BusObject.nodeXML(children: children))]) }
            return fail(BusError.unknownObject, "no object at \(shownPath)")
        }
        guard let object else {
            return fail(BusError.unknownObject, "no object at \(shownPath)")
        }
        if interface == BusObject.propertiesInterface {
            return properties(message, object, member: member, signature: signature, fail: fail, reply: reply)
        }
        let candidates = interface.map { name in object.interfaces.filter { $0.name == name } } ?? object.interfaces
        if candidates.isEmpty, let shown = shownInterface {
            return fail(BusError.unknownInterface, "no interface \(shown) at \(shownPath)")
        }
        guard let method = candidates.lazy.flatMap(\.methods).first(where: { $0.name == member }) else {
            return fail(BusError.unknownMethod, "no method \(shownMember)\(shownInterface.map { " in \($0)" } ?? "") at \(shownPath)")
        }
        guard signature == method.inputSignature else {
            return fail(BusError.invalidArgs, "\(member) takes '\(method.inputSignature)', got '\(shownSignature)'")
        }
        do {
            let arguments = try message.arguments()
            method.handler(MethodCall(message: message, arguments: arguments, connection: owner))
        } catch {
            fail(error.name, error.message)
        }
    }

    private func properties(
        _ message: BusMessage, _ object: BusObject, member: String, signature: String,
        fail: (String, String) -> Void, reply: ([BusValue]) -> Void
    ) {
        let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        guard let want = expected[member] else {
            return fail(BusError.unknownMethod, "no method \(BusError.shown(member)) in \(BusObject.propertiesInterface)")
        }
        guard signature == want else {
            return fail(BusError.invalidArgs, "\(member) takes '\(want)', got '\(BusError.shown(signature))'")
        }
        guard let args = try? message.arguments(), let interfaceName = args.first?.string else {
            return fail(BusError.invalidArgs, "unreadable arguments")
        }
        // An empty interface name means "any interface" (the spec allows it for Get).
        let scope = interfaceName.isEmpty ? object.interfaces : object.interfaces.filter { $0.name == interfaceName }
        if scope.isEmpty {
            if [BusObject.introspectableInterface, BusObject.propertiesInterface, BusObject.peerInterface].contains(interfaceName) {
                if member == "GetAll" { return reply([.vardict([])]) }
            } else {
                return fail(BusError.unknownInterface, "no interface \(BusError.shown(interfaceName)) at \(object.path)")
            }
        }
        switch member {
        case "GetAll":
            reply([.vardict(scope.flatMap(\.properties).map { ($0.name, $0.get()) })])
        default:
            let name = args.count > 1 ? (args[1].string ?? "") : ""
            guard scope.flatMap(\.properties).first(where: { $0.name == name }).map({ p in
                if member == "Get" { reply([.variant(p.get())]) } else {
                    fail(BusError.propertyReadOnly, "property \(name) is read-only")
                }
            }) != nil else {
                return fail(BusError.unknownProperty, "no property \(BusError.shown(name)) in \(interfaceName.isEmpty ? object.path : BusError.shown(interfaceName))")
            }
        }
    }

    /// The next path segment of every object below `path` (for introspecting parents).
    private static func children(of path: String, in paths: Dictionary<String, BusObject>.Keys) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names: [String] = []
        for p in paths where p.hasPrefix(prefix) && p != path {
            let rest = p.dropFirst(prefix.count)
            let first = String(rest.prefix { $0 != "/" })
            if !first.isEmpty, !names.contains(first) { names.append(first) }
        }
        return names.sorted()
    }
}
