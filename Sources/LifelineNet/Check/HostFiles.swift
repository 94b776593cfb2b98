import LifelineCore
import LifelinePlatform

/// The kernel files the probe reads (packet counters) and the resolver it
/// names, under roots tests can replace. The route and the router's neighbour
/// entry come from rtnetlink (`GatewayReader`), not from files.
package struct HostFiles: Sendable {
    package var sys: String
    package var resolvConf: String

    package init(sys: String = "/sys", resolvConf: String = "/etc/resolv.conf") {
        self.sys = sys
        self.resolvConf = resolvConf
    }

    package func counters(of interface: String) -> PacketCounters? {
        guard
            !interface.isEmpty, !interface.contains("/"),
            let tx = readCounter(interface, "tx_packets"), let rx = readCounter(interface, "rx_packets")
        else { return nil }
        return PacketCounters(tx: tx, rx: rx)
    }

    private func readCounter(_ interface: String, _ name: String) -> UInt64? {
        guard let text = try? Files.readText(sys + "/class/net/\(interface)/statistics/\(name)", limit: 64) else { return nil }
        return UInt64(text.trimmingSpaces())
    }
}
