/// The connectivity states, ordered from worst to best.
public enum ConnectivityState: String, Sendable, CaseIterable, Codable, Comparable {
    /// No decision yet (daemon just started, or no monitor has reported).
    case unknown
    /// No usable default route.
    case offline
    /// A route exists but the internet does not answer.
    case limited
    /// The internet answers with something other than the expected reply.
    case portal
    /// The probe got the expected reply (or a route exists and probing is off).
    case online

    private var rank: Int {
        switch self {
        case .unknown: 0
        case .offline: 1
        case .limited: 2
        case .portal: 3
        case .online: 4
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    /// A state the user should be told about (anything decided that is not online).
    public var isDegraded: Bool { self != .online && self != .unknown }
}

/// The kind of the primary interface (the state's `kind`); `.none` is the empty string.
public enum InterfaceKind: String, Sendable, CaseIterable, Codable {
    case ethernet, wifi, wwan, vpn, other
    case none = ""
}
