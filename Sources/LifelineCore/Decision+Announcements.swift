extension Decision {
    /// The captive-portal announcements link observations carry, per
    /// interface. The link monitor's own announcement for its link comes
    /// first; another link monitor may announce one for the same interface
    /// while it says nothing about the link itself (NetworkManager's DHCP
    /// options ride on a link observation of `unknown`), and the newest such
    /// one counts then.
    struct Announced {
        private var newest: [String: (portal: CaptivePortal, stamp: UInt64)] = [:]

        mutating func note(_ input: Input) {
            let o = input.observation
            guard o.role == .link, o.state != .offline, !o.interface.isEmpty, let portal = o.captivePortal else { return }
            if newest[o.interface].map({ input.stamp > $0.stamp }) ?? true { newest[o.interface] = (portal, input.stamp) }
        }

        /// The announcement for the link `link` speaks of.
        func portal(for link: Observation) -> CaptivePortal? {
            link.captivePortal ?? newest[link.interface]?.portal
        }
    }
}
