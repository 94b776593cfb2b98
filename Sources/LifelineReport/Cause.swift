import LifelineCore
import LifelinePlatform

/// Whose side the failure was on, from the layer that failed first: what a
/// person can act on (their own machine, their router, their provider) and
/// what they can show their provider.
public enum Cause: String, Sendable, CaseIterable {
    /// The interface, its cable or Wi-Fi association, its address, its route.
    case device
    /// A VPN that passes nothing while the link underneath works.
    case tunnel
    /// The default gateway did not answer.
    case router
    /// The resolver did not answer.
    case dns
    /// Past the router: the connection, TLS or the answer failed.
    case beyond
    /// A sign-in page answered in the internet's place.
    case portal
    /// The check servers themselves failed, while the rest worked.
    case checkServers = "check_servers"
    /// The log does not say (older lines, a monitor that does not diagnose).
    case unknown

    /// Grouped by the layer's name as the log writes it, so a layer a newer
    /// daemon logs still lands somewhere instead of being dropped.
    public init(layer: String) {
        switch layer {
        case "link", "carrier", "address", "route": self = .device
        case "tunnel": self = .tunnel
        case "gateway": self = .router
        case "dns": self = .dns
        case "tcp", "tls", "http": self = .beyond
        case "portal": self = .portal
        case "endpoint", "endpoints", "check_servers": self = .checkServers
        default: self = .unknown
        }
    }

    public init(_ diagnosis: Diagnosis) { self.init(layer: diagnosis.rawValue) }

    /// The group's name on the page.
    public func name(_ t: Translator) -> String {
        switch self {
        case .device: t.tr("your device or Wi-Fi")
        case .tunnel: t.tr("VPN tunnel")
        case .router: t.tr("your router")
        case .dns: t.tr("DNS")
        case .beyond: t.tr("beyond your router")
        case .portal: t.tr("sign-in page")
        case .checkServers: t.tr("check servers")
        case .unknown: t.tr("not diagnosed")
        }
    }
}
