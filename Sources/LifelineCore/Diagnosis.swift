/// The layer of the network that failed first, from the cable up: what the
/// user has to fix (plug the cable in, restart the router, change the DNS
/// server, sign in to the portal). Empty when online, and when nobody knows.
public enum Diagnosis: String, Sendable, CaseIterable, Codable {
    /// The interface is gone or down.
    case link
    /// The interface is up but has no carrier (cable out, Wi-Fi not associated).
    case carrier
    /// The interface has no address to send from.
    case address
    /// No usable default route.
    case route
    /// The default gateway does not answer ARP or neighbour discovery.
    case gateway
    /// A VPN tunnel passes no traffic while the link underneath it reaches its router.
    case tunnel
    /// The resolver does not answer, or cannot resolve the check host.
    case dns
    /// The check server refused the connection or did not answer it.
    case tcp
    /// The TLS handshake failed.
    case tls
    /// The server answered, but not with HTTP as expected.
    case http
    /// A captive portal answered in the server's place.
    case portal
    case none = ""
}

/// The state of each address family that has a default route, measured on its
/// own: IPv6 can be broken while IPv4 works. Nil for a family without a route.
public struct FamilyStates: Sendable, Equatable, Codable {
    public var ipv4: ConnectivityState?
    public var ipv6: ConnectivityState?

    public init(ipv4: ConnectivityState? = nil, ipv6: ConnectivityState? = nil) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }

    public var isEmpty: Bool { ipv4 == nil && ipv6 == nil }

    /// (name, state) for each family present, IPv4 first: what JSON and D-Bus carry.
    public var entries: [(family: String, state: ConnectivityState)] {
        var out: [(String, ConnectivityState)] = []
        if let ipv4 { out.append(("ipv4", ipv4)) }
        if let ipv6 { out.append(("ipv6", ipv6)) }
        return out
    }

    /// Sets the family named `family` ("ipv4" or "ipv6"); false for any other name.
    @discardableResult
    public mutating func set(_ family: String, _ state: ConnectivityState) -> Bool {
        switch family {
        case "ipv4": ipv4 = state
        case "ipv6": ipv6 = state
        default: return false
        }
        return true
    }
}
