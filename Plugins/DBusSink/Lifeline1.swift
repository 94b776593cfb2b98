import LifelineCore
import LifelineDBus

/// The `org.lifeline.Lifeline1` contract of SPEC §7: names, the interface
/// description, and the §2 event as D-Bus values. Shared by the service (this
/// sink) and its clients (`lifeline status|check|watch`).
public enum Lifeline1 {
    public static let busName = "org.lifeline.Lifeline1"
    public static let objectPath = "/org/lifeline/Lifeline1"
    public static let interfaceName = "org.lifeline.Lifeline1"

    /// The properties of SPEC §7 in order, with their D-Bus types.
    public static let propertySignatures: [(name: String, signature: String)] = [
        ("State", "s"), ("Previous", "s"), ("Since", "t"), ("Interface", "s"), ("Kind", "s"),
        ("Reason", "s"), ("RttMs", "d"), ("Metered", "b"), ("Sequence", "t"),
    ]

    /// The property values for `e`, in `propertySignatures` order.
    public static func properties(_ e: StateEvent) -> [(String, BusValue)] {
        [
            ("State", .string(e.state.rawValue)),
            ("Previous", .string(e.previous.rawValue)),
            ("Since", .uint64(UInt64(clamping: e.since))),
            ("Interface", .string(e.interface)),
            ("Kind", .string(e.kind.rawValue)),
            ("Reason", .string(e.reason)),
            ("RttMs", .double(e.rttMs)),
            ("Metered", .bool(e.metered)),
            ("Sequence", .uint64(e.sequence)),
        ]
    }

    /// Every field of SPEC §2 under its §2 name: `StateChanged` details and `GetStatus()`.
    public static func details(_ e: StateEvent) -> [(String, BusValue)] {
        [
            ("state", .string(e.state.rawValue)),
            ("previous", .string(e.previous.rawValue)),
            ("since", .uint64(UInt64(clamping: e.since))),
            ("interface", .string(e.interface)),
            ("kind", .string(e.kind.rawValue)),
            ("reason", .string(e.reason)),
            ("rtt_ms", .double(e.rttMs)),
            ("metered", .bool(e.metered)),
            ("sequence", .uint64(e.sequence)),
        ]
    }

    /// The event a `details` map describes; nil without a known `state`.
    /// Unknown keys are ignored and missing ones take their defaults, so a
    /// newer daemon with more fields still reads.
    public static func event(fromDetails pairs: [(String, BusValue)]) -> StateEvent? {
        var fields: [String: BusValue] = [:]
        for (k, v) in pairs { fields[k] = v }
        guard let state = fields["state"]?.string.flatMap(ConnectivityState.init(rawValue:)) else { return nil }
        return StateEvent(
            state: state,
            previous: fields["previous"]?.string.flatMap(ConnectivityState.init(rawValue:)) ?? .unknown,
            since: Int64(clamping: fields["since"]?.uint64 ?? 0),
            interface: fields["interface"]?.string ?? "",
            kind: fields["kind"]?.string.flatMap(InterfaceKind.init(rawValue:)) ?? .none,
            reason: fields["reason"]?.string ?? "",
            rttMs: fields["rtt_ms"]?.double ?? -1,
            metered: fields["metered"]?.bool ?? false,
            sequence: fields["sequence"]?.uint64 ?? 0
        )
    }

    /// The interface, with handlers and getters supplied by the service.
    static func interface(
        check: @escaping @Sendable (MethodCall) -> Void,
        getStatus: @escaping @Sendable (MethodCall) -> Void,
        mute: @escaping @Sendable (MethodCall) -> Void,
        property: @escaping @Sendable (String) -> BusValue
    ) -> BusInterface {
        BusInterface(
            name: interfaceName,
            methods: [
                .init("Check", outputs: [.init("state", "s")], handler: check),
                .init("GetStatus", outputs: [.init("status", "a{sv}")], handler: getStatus),
                .init("Mute", inputs: [.init("seconds", "u")], handler: mute),
            ],
            properties: propertySignatures.map { p in
                .init(p.name, p.signature) { property(p.name) }
            },
            signals: [
                .init("StateChanged", [.init("state", "s"), .init("previous", "s"), .init("details", "a{sv}")]),
            ]
        )
    }

    /// The interface alone as introspection XML: `packaging/dbus/org.lifeline.Lifeline1.xml`.
    public static var introspectionDocument: String {
        interface(check: { _ in }, getStatus: { _ in }, mute: { _ in }, property: { _ in .string("") }).document
    }
}
