import LifelineCore
import LifelinePlatform

/// Reads `PathFacts` in the probe's own network namespace, only after a probe
/// failed: the resolver from resolv.conf, the default route and its router's
/// neighbour entry from the kernel (rtnetlink, one dump each).
extension HostFiles {
    /// `family`: the probe's; `.any` takes IPv4's gateway, else IPv6's. No
    /// wait and nothing sent: the failed probe itself made the kernel ask for
    /// the router, so its entry already says whether the router answered.
    package func pathFacts(interface: String, family: AddressFamily = .any) -> PathFacts {
        var facts = PathFacts(interface: interface, resolver: resolver())
        guard let reading = try? GatewayReader.read(neighbours: true),
              let gateway = Self.gateway(reading.gateways, interface: interface, family: family),
              !gateway.address.isEmpty else { return facts }
        facts.interface = gateway.interface
        facts.gateway = gateway.address
        facts.gatewayAnswers = gateway.answers
        return facts
    }

    /// The families with a default route (on `interface` when it is not empty), IPv4 first.
    package func defaultRouteFamilies(interface: String) -> [AddressFamily] {
        let gateways = (try? GatewayReader.read(neighbours: false).gateways) ?? []
        return gateways.filter { interface.isEmpty || $0.interface == interface }
            .map { $0.family == .ipv4 ? .ipv4 : .ipv6 }
    }

    /// The gateway a probe of `family` went through (on `interface` when it is not empty).
    package static func gateway(_ gateways: [DefaultGateway], interface: String, family: AddressFamily) -> DefaultGateway? {
        let wanted: [DefaultGateway.Family] = switch family {
        case .ipv4: [.ipv4]
        case .ipv6: [.ipv6]
        case .any: [.ipv4, .ipv6]
        }
        return wanted.lazy.compactMap { f in
            gateways.first { $0.family == f && (interface.isEmpty || $0.interface == interface) }
        }.first
    }

    private func resolver() -> String? {
        guard let text = try? Files.readText(resolvConf, limit: 64 << 10) else { return nil }
        return Self.firstNameserver(text)
    }

    package static func firstNameserver(_ resolvConf: String) -> String? {
        for line in resolvConf.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            return ProbeExpectation.clean(String(words[1]), limit: 64)
        }
        return nil
    }
}
