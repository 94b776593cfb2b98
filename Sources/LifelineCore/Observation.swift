/// Which layer of the network an observation speaks for. Link facts beat
/// reachability results: with no route the state is `offline`
/// whatever the last probe said.
public enum ObservationRole: Int, Sendable, CaseIterable, Codable {
    /// Is there a usable default route? (netlink, NetworkManager `State`)
    case link
    /// Does the internet answer as expected? (probe, NetworkManager `Connectivity`)
    case reachability
}

/// One monitor's view of the network at one moment.
public struct Observation: Sendable, Equatable {
    public var role: ObservationRole
    public var state: ConnectivityState
    public var interface: String
    public var kind: InterfaceKind
    /// One human sentence: "default route via wlan0 removed".
    public var reason: String
    /// Last probe round trip in milliseconds, or nil when not measured.
    public var rttMs: Double?
    /// Nil when the monitor does not know.
    public var metered: Bool?
    /// The network connection's own name ("Home Wi-Fi"), "" when the monitor does not know.
    public var connection: String = ""
    /// The layer that failed first; `.none` when online or not known.
    public var diagnosis: Diagnosis = .none
    /// Per-family states, from a monitor that measures each family on its own.
    public var families = FamilyStates()
    /// Through a VPN: the interface that carries the tunnel ("wlan0"), "" otherwise.
    public var underneath: String = ""
    /// The kind of `underneath`.
    public var underneathKind: InterfaceKind = .none
    /// The network's captive-portal API on `interface`, where one was
    /// announced: the announcement from a link monitor, with the API's
    /// answer from the probe.
    public var captivePortal: CaptivePortal?

    public init(
        role: ObservationRole,
        state: ConnectivityState,
        interface: String = "",
        kind: InterfaceKind = .none,
        reason: String = "",
        rttMs: Double? = nil,
        metered: Bool? = nil,
        connection: String = ""
    ) {
        self.role = role
        self.state = state
        self.interface = interface
        self.kind = kind
        self.reason = reason
        self.rttMs = rttMs
        self.metered = metered
        self.connection = connection
    }
}
