import LifelineCore

/// Reads the runtime state file (`StateFile.render` writes it) without Foundation:
/// `lifeline status` runs once a second from a tmux `#()` or a bar, so its start-up
/// cost is the product. The file is one flat JSON object written by the daemon; the
/// reader still treats it as untrusted (bounded, every field checked).
public struct StateRecord: Sendable, Equatable {
    public var event: StateEvent
    /// The daemon that wrote it; a file whose daemon is gone describes nothing.
    public var pid: Int32
    /// Alerts are muted until this time (µs since the epoch); 0 when not muted.
    public var mutedUntil: Int64

    public init(event: StateEvent, pid: Int32, mutedUntil: Int64 = 0) {
        self.event = event
        self.pid = pid
        self.mutedUntil = mutedUntil
    }

    /// The largest sequence number taken from a file: 2^53 − 1, the largest
    /// integer every JSON reader holds exactly. A larger one comes from a crafted
    /// or corrupt file, and counting on from it could overflow.
    public static let sequenceLimit: Int64 = (1 << 53) - 1

    /// Times (µs since the epoch) a file may hold: 1970 to the end of year 9999.
    /// Anything else is a crafted or corrupt file, and arithmetic on it could overflow.
    public static let timeRange: ClosedRange<Int64> = 0...253_402_300_799_999_999

    /// Round-trip times a file may hold in ms: -1 (unknown) up to a day.
    public static let rttRange: ClosedRange<Double> = -1...86_400_000

    public static func validSequence(_ n: Int64) -> UInt64? {
        (0...sequenceLimit).contains(n) ? UInt64(n) : nil
    }

    /// Nil when the text is not a state record (missing or mistyped field, bad
    /// JSON, a number out of range).
    public static func parse(_ bytes: some Collection<UInt8>) -> StateRecord? {
        guard let (event, extra) = parseEvent(bytes), let pid = extra.pid, pid > 0, pid <= Int64(Int32.max),
              extra.mutedUntil == 0 || timeRange.contains(extra.mutedUntil)
        else { return nil }
        return StateRecord(event: event, pid: Int32(pid), mutedUntil: extra.mutedUntil)
    }

    /// One event as `JSONText.object` writes it (a log line, or the state file
    /// without its extras); nil on a missing or mistyped field or a number out of range.
    public static func parseEvent(_ bytes: some Collection<UInt8>) -> (event: StateEvent, extra: (pid: Int64?, mutedUntil: Int64))? {
        // Fields land in plain variables, not a dictionary: a `[String: Value]`
        // costs this short-lived process generic-metadata and conformance lookups
        // that take longer than the parse itself.
        var state: ConnectivityState?, previous: ConnectivityState?, kind: InterfaceKind?
        var since: Int64?, sequence: Int64?, pid: Int64?, mutedUntil: Int64 = 0
        var interface: String?, reason: String?, rtt: Double?, metered: Bool?
        var connection = ""  // absent in files an older daemon wrote
        // Written since the layered diagnosis; older files and log lines lack them.
        var diagnosis = Diagnosis.none, families = FamilyStates(), familiesValid = true
        var underneath = "", underneathKind = InterfaceKind.none  // written since VPNs are told apart
        var captivePortal: CaptivePortal?  // only where a network announced one
        var qualityLevel: QualityLevel?, qualityDetails: [UInt8]?  // written while a quality is known
        let wellFormed = FlatJSON.forEachMember(Array(bytes)) { key, value in
            switch (key, value) {
            case ("state", .string(let s)): state = ConnectivityState(rawValue: s)
            case ("previous", .string(let s)): previous = ConnectivityState(rawValue: s)
            case ("since", _): since = value.int64
            case ("interface", .string(let s)): interface = s
            case ("kind", .string(let s)): kind = InterfaceKind(rawValue: s)
            case ("reason", .string(let s)): reason = s
            case ("rtt_ms", _): rtt = value.double
            case ("metered", .bool(let b)): metered = b
            case ("sequence", _): sequence = value.int64
            case ("connection", .string(let s)): connection = s
            case ("pid", _): pid = value.int64
            case ("muted_until", _): mutedUntil = value.int64 ?? 0
            case ("diagnosis", .string(let s)): diagnosis = Diagnosis(rawValue: s) ?? .none
            case ("underneath", .string(let s)): underneath = s
            case ("underneath_kind", .string(let s)): underneathKind = InterfaceKind(rawValue: s) ?? .none
            case ("captive_portal", .nested(let text)): captivePortal = parseCaptivePortal(text)
            case ("quality", .string(let s)): qualityLevel = QualityLevel(rawValue: s)
            case ("quality_details", .nested(let text)): qualityDetails = text
            case ("families", .nested(let text)):
                if let f = parseFamilies(text) { families = f } else { familiesValid = false }
            default: break
            }
        }
        guard wellFormed, let state, let previous, let since, timeRange.contains(since), let interface, let kind,
              let reason, let rtt, rttRange.contains(rtt), let metered, let sequence, let valid = validSequence(sequence),
              familiesValid
        else { return nil }
        var event = StateEvent(
            state: state, previous: previous, since: since, interface: interface, kind: kind,
            reason: reason, rttMs: rtt, metered: metered, sequence: valid,
            connection: connection)
        event.diagnosis = diagnosis
        event.families = families
        event.underneath = underneath
        event.underneathKind = underneathKind
        event.captivePortal = captivePortal
        if let qualityLevel, let qualityDetails { event.quality = Quality.parse(level: qualityLevel, details: qualityDetails) }
        return (event, (pid, mutedUntil))
    }

    /// The `captive_portal` object `JSONText.captivePortal` writes; nil when it
    /// is not one (a crafted file: no `api` or `source`, a mistyped member).
    public static func parseCaptivePortal(_ bytes: [UInt8]) -> CaptivePortal? {
        var members: [(name: String, value: CaptivePortal.Value)] = []
        let wellFormed = FlatJSON.forEachMember(bytes) { key, value in
            switch value {
            case .string(let s): members.append((key, .string(s)))
            case .bool(let b): members.append((key, .bool(b)))
            case .number: if let n = value.int64 { members.append((key, .integer(n))) }
            default: break
            }
        }
        return wellFormed ? CaptivePortal(members: members) : nil
    }

    /// `{"ipv4":"online","ipv6":"limited"}`; nil when it is not an object of
    /// known family names with known states.
    public static func parseFamilies(_ bytes: [UInt8]) -> FamilyStates? {
        var families = FamilyStates()
        var valid = true
        let wellFormed = FlatJSON.forEachMember(bytes) { key, value in
            guard case .string(let s) = value, let state = ConnectivityState(rawValue: s), families.set(key, state) else {
                valid = false
                return
            }
        }
        return wellFormed && valid ? families : nil
    }
}
