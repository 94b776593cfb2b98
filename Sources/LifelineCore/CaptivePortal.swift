/// Where a network announced its captive-portal API (RFC 8910): a Router
/// Advertisement's option 37, DHCPv4 option 114 or DHCPv6 option 103, as
/// read from the kernel (`ra`), systemd-networkd's link state (`networkd`) or
/// NetworkManager's DHCP options (`networkmanager`, `dhcp4`, `dhcp6`).
public enum CaptivePortalSource: String, Sendable, Equatable, CaseIterable {
    case ra, dhcp4, dhcp6, networkd, networkmanager
}

/// The network's captive-portal API as it was announced on one interface,
/// and what the API answered last (RFC 8908). Only the keys the API gave are
/// set; an announcement not yet asked has `api` and `source` alone.
public struct CaptivePortal: Sendable, Equatable {
    /// The API's https:// URL, as announced.
    public var api: String
    public var source: CaptivePortalSource
    public var captive: Bool?
    /// Where the user signs in; only ever an https:// URL (others are refused).
    public var userPortalURL: String?
    public var venueInfoURL: String?
    public var secondsRemaining: Int64?
    public var bytesRemaining: Int64?
    public var canExtendSession: Bool?

    public init(api: String, source: CaptivePortalSource) {
        self.api = api
        self.source = source
    }

    /// An amount the API counts (`bytes-remaining`) for people: "4 MB",
    /// "800 kB", "512 bytes" (decimal units, as the networks that sell them use).
    public static func amount(_ bytes: Int64) -> String {
        bytes >= 1_000_000 ? "\(bytes / 1_000_000) MB" : bytes >= 1000 ? "\(bytes / 1000) kB" : "\(bytes) bytes"
    }

    /// The announcement without the API's answer.
    public var announcement: CaptivePortal { CaptivePortal(api: api, source: source) }

    /// The RFC 8910 value that says the network has no portal.
    public static let unrestricted = "urn:ietf:params:capport:unrestricted"

    /// One member's value, for the surfaces that write them (JSON, D-Bus).
    public enum Value: Sendable, Equatable {
        case string(String)
        case bool(Bool)
        case integer(Int64)
    }

    /// The members every surface writes, in this order, under these names;
    /// those the API did not give are left out.
    public var members: [(name: String, value: Value)] {
        var m: [(String, Value)] = [("api", .string(api)), ("source", .string(source.rawValue))]
        if let captive { m.append(("captive", .bool(captive))) }
        if let userPortalURL { m.append(("user_portal_url", .string(userPortalURL))) }
        if let venueInfoURL { m.append(("venue_info_url", .string(venueInfoURL))) }
        if let secondsRemaining { m.append(("seconds_remaining", .integer(secondsRemaining))) }
        if let bytesRemaining { m.append(("bytes_remaining", .integer(bytesRemaining))) }
        if let canExtendSession { m.append(("can_extend_session", .bool(canExtendSession))) }
        return m
    }

    /// Read back from `members` (a state file, a D-Bus reply); nil without
    /// `api` and a known `source`.
    public init?(members: [(name: String, value: Value)]) {
        var api: String?, source: CaptivePortalSource?
        var portal = CaptivePortal(api: "", source: .ra)
        for (name, value) in members {
            switch (name, value) {
            case ("api", .string(let s)): api = s
            case ("source", .string(let s)): source = CaptivePortalSource(rawValue: s)
            case ("captive", .bool(let b)): portal.captive = b
            case ("user_portal_url", .string(let s)): portal.userPortalURL = s
            case ("venue_info_url", .string(let s)): portal.venueInfoURL = s
            case ("seconds_remaining", .integer(let n)): portal.secondsRemaining = n
            case ("bytes_remaining", .integer(let n)): portal.bytesRemaining = n
            case ("can_extend_session", .bool(let b)): portal.canExtendSession = b
            default: break
            }
        }
        guard let api, let source else { return nil }
        portal.api = api
        portal.source = source
        self = portal
    }

    /// Whether the API's last answer says the user must sign in.
    public var saysCaptive: Bool { captive == true }
}
