import Glibc
import LifelineCore
import LifelinePlatform

/// Tells what kind of interface carries the default route (the state's `kind` field),
/// from sysfs and what netlink said about the link. The sysfs root is a
/// parameter so tests can hand it a fake tree.
///
/// - `wireless/` or `phy80211/` in the device folder, or `DEVTYPE=wlan`: wifi
/// - `DEVTYPE=wwan`, or ARPHRD_RAWIP (519, modem data links): wwan
/// - tun/tap (`tun_flags`), wireguard, ppp (ARPHRD_PPP): vpn
/// - ARPHRD_ETHER: ethernet; anything else: other
package struct InterfaceKinds: Sendable {
    package init(sysfsRoot: String = "/sys/class/net") { self.sysfsRoot = sysfsRoot }
    package var sysfsRoot: String

    package func kind(of link: RouteTable.Link) -> InterfaceKind {
        let dir = sysfsRoot + "/" + link.name
        if Files.exists(dir + "/wireless") || Files.exists(dir + "/phy80211") { return .wifi }
        let devtype = deviceType(dir)
        switch devtype {
        case "wlan": return .wifi
        case "wwan": return .wwan
        case "wireguard", "ppp": return .vpn
        default: break
        }
        if let info = link.infoKind, ["wireguard", "tun", "ppp", "l2tp", "openvpn"].contains(info) { return .vpn }
        if Files.exists(dir + "/tun_flags") { return .vpn }
        let type = sysfsType(dir) ?? link.hardwareType
        switch type {
        case 1: return .ethernet  // ARPHRD_ETHER
        case 512: return .vpn  // ARPHRD_PPP
        case 519: return .wwan  // ARPHRD_RAWIP
        case 65534: return link.infoKind == nil ? .vpn : .other  // ARPHRD_NONE: tun-like
        default: return .other
        }
    }

    /// `DEVTYPE=` from the device's uevent file, if any.
    private func deviceType(_ dir: String) -> String? {
        guard let text = try? Files.readText(dir + "/uevent", limit: 8192) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    private func sysfsType(_ dir: String) -> UInt16? {
        guard let text = try? Files.readText(dir + "/type", limit: 64) else { return nil }
        return UInt16(text.filter { !$0.isWhitespace })
    }
}

/// Shell-style interface name patterns (`docker*`, `br-*`), matched with fnmatch(3).
package struct NamePatterns: Sendable {
    package init(patterns: [String]) { self.patterns = patterns }
    package var patterns: [String]

    package func matches(_ name: String) -> Bool {
        patterns.contains { fnmatch($0, name, 0) == 0 }
    }
}
