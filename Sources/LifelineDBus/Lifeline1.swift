import LifelineCore

/// The `org.lifeline.Lifeline1` contract: names, the interface description, and
/// the published event as D-Bus values. The service (the `dbus` sink) and its
/// clients (`lifeline status|check|watch`, the benchmarks) share it from here,
/// so no client links a plugin to learn the names.
public enum Lifeline1 {
    public static let busName = "org.lifeline.Lifeline1"
    public static let objectPath = "/org/lifeline/Lifeline1"
    public static let interfaceName = "org.lifeline.Lifeline1"

    /// `Mute(u seconds)` accepts at most a day: a longer silence is more likely
    /// a mistake (or a nuisance from another program) than a wish.
    public static let maximumMuteSeconds: UInt32 = 86_400

    /// The properties in order, with their D-Bus types.
    public static let propertySignatures: [(name: String, signature: String)] = [
        ("State", "s"), ("Previous", "s"), ("Since", "t"), ("Interface", "s"), ("Kind", "s"),
        ("Reason", "s"), ("RttMs", "d"), ("Metered", "b"), ("Sequence", "t"), ("MutedUntil", "t"),
        ("Diagnosis", "s"),
    ] + qualitySignatures

    /// The property values for `e` and the mute (µs since the epoch, 0 when not
    /// muted), in `propertySignatures` order.
    public static func properties(_ e: StateEvent, mutedUntil: UInt64) -> [(String, BusValue)] {
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
            ("MutedUntil", .uint64(mutedUntil)),
            ("Diagnosis", .string(e.diagnosis.rawValue)),
        ] + qualityProperties(e.quality)
    }

    /// Every field of the published event under its JSON name: `StateChanged`'s details.
    public static func details(_ e: StateEvent) -> [(String, BusValue)] {
        var fields: [(String, BusValue)] = [
            ("state", .string(e.state.rawValue)),
            ("previous", .string(e.previous.rawValue)),
            ("since", .uint64(UInt64(clamping: e.since))),
            ("interface", .string(e.interface)),
            ("kind", .string(e.kind.rawValue)),
            ("reason", .string(e.reason)),
            ("rtt_ms", .double(e.rttMs)),
            ("metered", .bool(e.metered)),
            ("sequence", .uint64(e.sequence)),
            ("connection", .string(e.connection)),
            ("diagnosis", .string(e.diagnosis.rawValue)),
            ("families", families(e.families)),
        ]
        // Only through a VPN, as in the event's JSON.
        if !e.underneath.isEmpty {
            fields += [("underneath", .string(e.underneath)), ("underneath_kind", .string(e.underneathKind.rawValue))]
        }
        // Only where a network announced one, as in the event's JSON.
        if let portal = e.captivePortal { fields.append(("captive_portal", captivePortalValue(portal))) }
        return fields + qualityFields(e)
    }

    /// `a{ss}`: family name → state, only the families that have a default route.
    public static func families(_ f: FamilyStates) -> BusValue {
        .dictionary(key: "s", value: "s", f.entries.map { .init(.string($0.family), .string($0.state.rawValue)) })
    }

    /// The families an `a{ss}` names; unknown families and states are skipped.
    static func families(from value: BusValue?) -> FamilyStates {
        var families = FamilyStates()
        guard case .dictionary("s", "s", let entries)? = value else { return families }
        for e in entries {
            guard let name = e.key.string, let state = e.value.string.flatMap(ConnectivityState.init(rawValue:)) else { continue }
            families.set(name, state)
        }
        return families
    }

    /// `GetStatus()`: the event's details and `muted_until` (µs, 0 when not muted).
    public static func status(_ e: StateEvent, mutedUntil: UInt64) -> [(String, BusValue)] {
        details(e) + [("muted_until", .uint64(mutedUntil))]
    }

    /// The event a `details` map describes; nil without a known `state`.
    /// Unknown keys are ignored and missing ones take their defaults, so a
    /// newer daemon with more fields still reads.
    public static func event(fromDetails pairs: [(String, BusValue)]) -> StateEvent? {
        var fields: [String: BusValue] = [:]
        for (k, v) in pairs { fields[k] = v }
        guard let state = fields["state"]?.string.flatMap(ConnectivityState.init(rawValue:)) else { return nil }
        var event = StateEvent(
            state: state,
            previous: fields["previous"]?.string.flatMap(ConnectivityState.init(rawValue:)) ?? .unknown,
            since: Int64(clamping: fields["since"]?.uint64 ?? 0),
            interface: fields["interface"]?.string ?? "",
            kind: fields["kind"]?.string.flatMap(InterfaceKind.init(rawValue:)) ?? .none,
            reason: fields["reason"]?.string ?? "",
            rttMs: fields["rtt_ms"]?.double ?? -1,
            metered: fields["metered"]?.bool ?? false,
            sequence: fields["sequence"]?.uint64 ?? 0,
            connection: fields["connection"]?.string ?? ""
        )
        event.diagnosis = fields["diagnosis"]?.string.flatMap(Diagnosis.init(rawValue:)) ?? .none
        event.families = families(from: fields["families"])
        event.underneath = fields["underneath"]?.string ?? ""
        event.underneathKind = fields["underneath_kind"]?.string.flatMap(InterfaceKind.init(rawValue:)) ?? .none
        event.captivePortal = captivePortal(from: fields["captive_portal"])
        event.quality = quality(level: fields["quality"], details: fields["quality_details"])
        return event
    }

    /// The interface, with handlers and getters supplied by the service.
    public static func interface(
        check: @escaping @Sendable (MethodCall) -> Void,
        getStatus: @escaping @Sendable (MethodCall) -> Void,
        mute: @escaping @Sendable (MethodCall) -> Void,
        property: @escaping @Sendable (String) -> BusValue,
        jobs: JobHandlers = .unanswered
    ) -> BusInterface {
        BusInterface(
            name: interfaceName,
            methods: [
                .init("Check", outputs: [.init("state", "s")], handler: check),
                .init("GetStatus", outputs: [.init("status", "a{sv}")], handler: getStatus),
                .init("Mute", inputs: [.init("seconds", "u")], handler: mute),
            ] + jobMethods(jobs),
            properties: (propertySignatures + [jobsSignature, captivePortalSignature]).map { p in
                .init(p.name, p.signature) { property(p.name) }
            },
            signals: [
                .init("StateChanged", [.init("state", "s"), .init("previous", "s"), .init("details", "a{sv}")]),
                .init("JobsRequested", [.init("action", "s"), .init("ids", "as")]),
            ]
        )
    }

    /// The interface alone as introspection XML: `packaging/dbus/org.lifeline.Lifeline1.xml`.
    public static var introspectionDocument: String {
        interface(check: { _ in }, getStatus: { _ in }, mute: { _ in }, property: { _ in .string("") }).document
    }
}
