import LifelineDBus
import LifelineNet

/// The captive-portal API a network announced over DHCP, as NetworkManager
/// shows it: the `Options` (a{sv}, every value a string) of the primary
/// connection's `DHCP4Config` and `DHCP6Config` objects.
///
/// NetworkManager names DHCPv4 option 114 `default_url` (dhclient's name for
/// it, which NetworkManager keeps when dhclient is its DHCP client); its own
/// client does not export the option. It has no name for DHCPv6 option 103
/// and does not export it; `dhcp6_captive_portal` is the name its DHCPv6
/// options would give it, taken should a version export it. Option 160
/// (`v4_captive_portal`, the code RFC 8910 retired because other vendors use
/// it) is not taken: its value need not be a portal at all.
enum DHCPCaptivePortal {
    static let dhcp4Names = ["default_url"]
    static let dhcp6Names = ["dhcp6_captive_portal"]

    /// The announcement in one `Options` map, checked as every announcement is;
    /// nil when the map names none.
    static func option(in options: [(String, BusValue)], names: [String]) -> CaptivePortalOption? {
        guard let (name, value) = options.first(where: { names.contains($0.0) }) else { return nil }
        guard let text = value.string else {
            return .refused("NetworkManager's DHCP option \(name) is not a string (D-Bus type \(value.signature))")
        }
        return CaptivePortalOption(uri: text)
    }
}
