import Glibc
import LifelineCore

/// What the probe knows of a VPN on its path after a failed probe: whether the
/// tunnel passed anything while the probe sent into it, and the state of the
/// link underneath. All of it is read from the kernel (a route lookup, the
/// tunnel's packet counters, the neighbour table) and from WireGuard's own
/// state where it can be read: nothing is sent outside the tunnel to find out.
package struct TunnelFacts: Sendable, Equatable {
    package var tunnel: String
    /// The tunnel sent during the probe and received nothing, or WireGuard's
    /// last handshake is too old (or never happened).
    package var passesNothing: Bool
    package var carrier: TunnelReader.Carrier?

    /// The layer to blame under DNS and TCP, or nil when neither the tunnel
    /// nor the link underneath is known to be at fault. The link underneath is
    /// looked at first: a tunnel over a dead link passes nothing either, and
    /// then the link is what to fix.
    package var verdict: (layer: Diagnosis, sentence: String)? {
        if let c = carrier {
            if !c.isUp { return (.link, "\(c.interface) is down") }
            if !c.hasCarrier { return (.carrier, "\(c.interface) has no carrier") }
            if c.routerAnswers == false, !c.router.isEmpty {
                return (.gateway, "\(c.interface) is connected but the router \(c.router) does not answer")
            }
        }
        guard passesNothing else { return nil }
        if let c = carrier, c.routerAnswers == true {
            return (.tunnel, "the VPN tunnel \(tunnel) passes no traffic; \(c.interface) underneath reaches its router")
        }
        return (.tunnel, "the VPN tunnel \(tunnel) passes no traffic")
    }
}

/// A tunnel's packet counters at the start of a probe, to compare with its
/// end: a tunnel that sends the probe's packets and receives nothing passes no
/// traffic, which a minute-old WireGuard handshake would not yet show.
package struct TunnelWatch: Sendable {
    package var tunnel: String
    package var before: PacketCounters?

    /// Before a probe: the interface the check server's packets leave by
    /// (the kernel's route lookup, policy rules included), when it is a
    /// tunnel. A check host given by name is not looked up here: a
    /// documentation address stands for "the internet", which the same
    /// default routes carry.
    package static func start(url: String, family: AddressFamily, files: HostFiles) -> TunnelWatch? {
        let target = FailedLayer.Target(url: url)
        let address = target.isAddress ? target.host : family == .ipv6 ? "2001:db8::1" : "192.0.2.1"
        guard let hop = try? TunnelReader.route(to: address), TunnelReader.tunnelKind(hop.interface, sys: files.sys + "/class/net") != nil
        else { return nil }
        return TunnelWatch(tunnel: hop.interface, before: files.counters(of: hop.interface))
    }

    /// After a failed probe: what the tunnel passed meanwhile, and the link underneath.
    package func finish(files: HostFiles) -> TunnelFacts {
        let after = files.counters(of: tunnel)
        let wireGuard = WireGuardState.read(tunnel)
        var silent = false
        if let before, let after, after.tx > before.tx, after.rx == before.rx { silent = true }
        if let wireGuard, wireGuard.handshakeIsStale(now: Int64(time(nil))) { silent = true }
        let carrier = TunnelReader.carrier(of: tunnel, endpoint: wireGuard?.endpoint, mark: wireGuard?.fwmark ?? 0)
        return TunnelFacts(tunnel: tunnel, passesNothing: silent, carrier: carrier)
    }
}
