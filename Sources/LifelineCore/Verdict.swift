/// The decision at one moment: one state plus the attributes that describe it.
/// Two verdicts are the same transition when `key` is equal (dedup:
/// only `state` and `interface` count).
public struct Verdict: Sendable, Equatable {
    public var state: ConnectivityState
    public var interface: String
    public var kind: InterfaceKind
    public var reason: String
    public var rttMs: Double?
    public var metered: Bool
    public var connection: String = ""
    public var diagnosis: Diagnosis = .none
    public var families = FamilyStates()
    /// Through a VPN: the interface that carries the tunnel ("wlan0"), "" otherwise.
    public var underneath: String = ""
    /// The kind of `underneath`.
    public var underneathKind: InterfaceKind = .none
    /// The network's captive-portal API on `interface`, where one was announced.
    public var captivePortal: CaptivePortal?

    public init(
        state: ConnectivityState, interface: String = "", kind: InterfaceKind = .none,
        reason: String = "", rttMs: Double? = nil, metered: Bool = false,
        connection: String = ""
    ) {
        self.state = state
        self.interface = interface
        self.kind = kind
        self.reason = reason
        self.rttMs = rttMs
        self.metered = metered
        self.connection = connection
    }

    public struct Key: Hashable, Sendable {
        public var state: ConnectivityState
        public var interface: String
        public init(state: ConnectivityState, interface: String) {
            self.state = state
            self.interface = interface
        }
    }

    public var key: Key { Key(state: state, interface: interface) }

    /// The same verdict with the failed layer and the per-family states.
    public func with(diagnosis: Diagnosis, families: FamilyStates) -> Verdict {
        var v = self
        v.diagnosis = diagnosis
        v.families = families
        return v
    }
}
