import Glibc
import LifelineNet
import LifelinePlatform

/// systemd-networkd's per-link state files (`/run/systemd/netif/links/<ifindex>`):
/// the `CAPTIVE_PORTAL=` line networkd writes from DHCPv4 option 114, DHCPv6
/// option 103 or the RA's option 37. networkd replaces a file by renaming a
/// new one over it, so a watch on the folder's entries sees every change.
enum NetworkdLinks {
    /// More files than any machine has links are not read.
    static let maxFiles = 256
    /// A link state file is a few hundred bytes; a larger one is not networkd's.
    static let maxFileBytes = 64 * 1024

    /// The announcement of every link file in `folder` that has one, by interface index.
    static func read(folder: String) -> [Int32: CaptivePortalOption] {
        guard let dir = opendir(folder) else { return [:] }
        defer { closedir(dir) }
        var found: [Int32: CaptivePortalOption] = [:]
        var seen = 0
        while let entry = readdir(dir), seen < maxFiles {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let index = Int32(name), index > 0 else { continue }
            seen += 1
            guard let text = try? Files.readText("\(folder)/\(name)", limit: maxFileBytes),
                  let value = captivePortal(in: text)
            else { continue }
            found[index] = CaptivePortalOption(uri: value)
        }
        return found
    }

    /// The `CAPTIVE_PORTAL=` value of a link state file, nil without one.
    static func captivePortal(in text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("CAPTIVE_PORTAL=") {
            let value = line.dropFirst("CAPTIVE_PORTAL=".count)
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }
}
