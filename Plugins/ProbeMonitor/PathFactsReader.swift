import LifelineCore

/// Reads `PathFacts` from the kernel's text tables of the probe's own network
/// namespace: a few small files, read only after a probe failed.
extension HostFiles {
    func pathFacts(interface: String) -> PathFacts {
        var facts = PathFacts(interface: interface, resolver: resolver())
        guard let route = try? Files.readText(proc + "/net/route", limit: 256 << 10),
              let (device, gateway) = Self.defaultGateway(route: route, interface: interface) else { return facts }
        facts.interface = device
        facts.gateway = gateway
        if let arp = try? Files.readText(proc + "/net/arp", limit: 256 << 10) {
            facts.gatewayAnswers = Self.neighbourAnswers(arp: arp, address: gateway, device: device)
        }
        return facts
    }

    /// The families with a default route (on `interface` when it is not empty), IPv4 first.
    func defaultRouteFamilies(interface: String) -> [ProbeMonitor.Config.Family] {
        var families: [ProbeMonitor.Config.Family] = []
        if let route = try? Files.readText(proc + "/net/route", limit: 256 << 10),
           Self.defaultGateway(route: route, interface: interface) != nil { families.append(.ipv4) }
        if let route = try? Files.readText(proc + "/net/ipv6_route", limit: 256 << 10),
           let found = LayerWalk.ipv6DefaultRoute(route), interface.isEmpty || found.device == interface { families.append(.ipv6) }
        return families
    }

    private func resolver() -> String? {
        guard let text = try? Files.readText(resolvConf, limit: 64 << 10) else { return nil }
        return Self.firstNameserver(text)
    }

    static func firstNameserver(_ resolvConf: String) -> String? {
        for line in resolvConf.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            return ProbeExpectation.clean(String(words[1]), limit: 64)
        }
        return nil
    }

    /// The IPv4 default route with the lowest metric (on `interface` when it is
    /// not empty) from `/proc/net/route`: its device and gateway address.
    static func defaultGateway(route: String, interface: String) -> (device: String, gateway: String)? {
        var best: (metric: UInt32, device: String, gateway: String)?
        for line in route.split(separator: "\n").dropFirst() {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            // Iface Destination Gateway Flags RefCnt Use Metric Mask …, numbers in hex.
            guard f.count >= 8, f[1] == "00000000", f[7] == "00000000",
                  let flags = UInt32(f[3], radix: 16), flags & 0x3 == 0x3,  // RTF_UP | RTF_GATEWAY
                  let raw = UInt32(f[2], radix: 16), let metric = UInt32(f[6], radix: 10)
            else { continue }
            let device = String(f[0])
            if !interface.isEmpty, device != interface { continue }
            // The kernel prints the address as a host-order (little-endian) word.
            let gateway = [raw & 0xFF, raw >> 8 & 0xFF, raw >> 16 & 0xFF, raw >> 24].map(String.init).joined(separator: ".")
            if best.map({ metric < $0.metric }) ?? true { best = (metric, device, gateway) }
        }
        return best.map { ($0.device, $0.gateway) }
    }

    /// From `/proc/net/arp`: true when the entry has a link-layer address
    /// (ATF_COM), false when the kernel is failing to get one, nil without an entry.
    static func neighbourAnswers(arp: String, address: String, device: String) -> Bool? {
        for line in arp.split(separator: "\n").dropFirst() {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 6, f[0] == address, f[5] == device, f[2].hasPrefix("0x"),
                  let flags = UInt32(f[2].dropFirst(2), radix: 16) else { continue }
            return flags & 0x2 != 0
        }
        return nil
    }
}
