import CNetlink
import Glibc
import LifelineCore
import LifelineNet
import Logging
import Synchronization

/// The socket side of the monitor: a plain `poll()` loop on its own thread
/// (measured the leanest: one thread, no wake-ups while nothing happens) over the
/// multicast socket and an eventfd that stops it. It owns the `RouteTable`
/// (confined to the thread, so no locks) and hands what the daemon must know
/// to `emit`.
final class NetlinkLoop: @unchecked Sendable {
    enum Event: Sendable {
        /// A new verdict (only when state, interface or kind changed) and/or a
        /// request that the probe check now (a change that touches the decision).
        case update(Observation?, check: Bool)
        /// The loop stopped on an error; the supervisor restarts the monitor.
        case failed(String)
    }

    struct Settings: Sendable {
        var receiveBuffer: Int?
        var deprioritised: NamePatterns
        var kinds: InterfaceKinds
        /// At most one re-dump per interval while overflows keep coming.
        var redumpInterval: Duration = .milliseconds(500)
        /// How long a Router Advertisement's captive-portal option stands
        /// after the last RA that carried it.
        var announcementLifetime: Duration = .seconds(1800)
    }

    private let settings: Settings
    private let logger: Logger
    private let events: NetlinkSocket
    private let dumps: NetlinkSocket
    private let wakeup: Wakeup
    /// Signalled when networkd's link state files changed (`networkd(_:)`).
    private let nudge: Wakeup
    private let networkdFound = Mutex<[Int32: CaptivePortalOption]?>(nil)
    private let buffer: UnsafeMutableRawBufferPointer

    // Thread-confined state.
    private var table = RouteTable()
    private var publishedKey: VerdictKey?
    private var lastPrimary: RouteTable.Primary?
    private var kindCache: (index: Int32, name: String, kind: InterfaceKind)?
    /// The connection's name for the current primary interface (it differs
    /// when a tunnel carries the internet's traffic); forgotten when rules change.
    private var tunnelCache: (index: Int32, name: String, naming: Naming)?
    /// Interfaces whose link and address events pass the socket filter.
    private var watched: Set<Int32> = []
    private var announcements: Announcements

    private struct VerdictKey: Equatable {
        var state: ConnectivityState
        var interface: String
        var kind: InterfaceKind
        /// While offline, the layer missing: a cable plugged in without an
        /// address yet is news (carrier → address).
        var diagnosis: Diagnosis
        /// The captive-portal API announced on the primary interface.
        var captivePortal: CaptivePortal?
    }

    init(settings: Settings, logger: Logger) throws(NetlinkSocket.Failure) {
        self.settings = settings
        self.logger = logger
        announcements = Announcements(lifetime: settings.announcementLifetime)
        // Rules too: a VPN that steers the internet's traffic by policy routing
        // (`wg-quick`, NetworkManager's WireGuard) leaves the main table's
        // default route alone and adds rules.
        let groups = LL_RTMGRP_LINK | LL_RTMGRP_IPV4_IFADDR | LL_RTMGRP_IPV6_IFADDR
            | LL_RTMGRP_IPV4_ROUTE | LL_RTMGRP_IPV6_ROUTE | LL_RTMGRP_IPV4_RULE
        events = try NetlinkSocket(groups: groups, nonBlocking: true, receiveBuffer: settings.receiveBuffer)
        // A kernel without IPv6 has no such group; IPv4 rules still count.
        try? events.join(group: LL_RTNLGRP_IPV6_RULE)
        // The RA options the kernel passes on (the captive portal's): no privilege needed.
        try? events.join(group: LL_RTNLGRP_ND_USEROPT)
        dumps = try NetlinkSocket(groups: 0, nonBlocking: true)
        wakeup = try Wakeup()
        nudge = try Wakeup()
        try events.attach(EventFilter.program(watching: []))
        // Large enough for any rtnetlink datagram (the kernel caps them at 32 KiB).
        buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Makes `run` return soon; safe from any thread, more than once.
    func stop() { wakeup.signal() }

    /// What networkd's link state files announce now; safe from any thread.
    func networkd(_ found: [Int32: CaptivePortalOption]) {
        networkdFound.withLock { $0 = found }
        nudge.signal()
    }

    /// Dumps, publishes the first verdict, then follows the kernel until `stop()`.
    func run(emit: (Event) -> Void) {
        do {
            try loop(emit: emit)
        } catch {
            emit(.failed("\(error)"))
        }
    }

    private func loop(emit: (Event) -> Void) throws(NetlinkSocket.Failure) {
        let clock = ContinuousClock()
        table = try dump()
        try syncWatched(refreshAll: true)
        var lastDump = clock.now
        try decide(check: false, emit: emit)
        var redumpPending = false
        var fds = [pollfd(fd: events.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: nudge.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            // Rounded up: waking a fraction of a millisecond early would spin.
            func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
                let wait = clock.now.duration(to: instant)
                let ms = wait.components.seconds * 1000 + (wait.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                return max(0, Int32(clamping: ms))
            }
            var timeout: Int32 = -1
            if redumpPending { timeout = milliseconds(until: lastDump.advanced(by: settings.redumpInterval)) }
            if let expiry = announcements.nextExpiry {
                let ms = milliseconds(until: expiry)
                timeout = timeout < 0 ? ms : min(timeout, ms)
            }
            for i in fds.indices { fds[i].revents = 0 }
            if poll(&fds, nfds_t(fds.count), timeout) < 0 {
                if errno == EINTR { continue }
                throw NetlinkSocket.Failure(operation: "poll", errno: errno)
            }
            if fds[1].revents != 0 { return }
            var relevant = false
            var announced = false
            if fds[2].revents != 0 {
                var count: UInt64 = 0
                _ = read(nudge.fd, &count, 8)
                if let found = networkdFound.withLock({ $0 }) { announced = announcements.networkd(found) }
            }
            if announcements.prune(links: table.links.keys, at: clock.now) { announced = true }
            if fds[0].revents != 0 {
                let (touched, overflowed, heard) = try drain()
                relevant = touched
                announced = announced || heard
                if overflowed, !redumpPending {
                    redumpPending = true
                    logger.warning("netlink: receive buffer overflowed (ENOBUFS), events were lost; re-dumping the kernel tables")
                }
            }
            if redumpPending {
                // While events are missing the table is not exact: publish nothing
                // until a fresh dump, at most one per interval.
                guard lastDump.duration(to: clock.now) >= settings.redumpInterval else { continue }
                table = try dump()
                try syncWatched(refreshAll: false)
                lastDump = clock.now
                redumpPending = false
                logger.info("netlink: tables re-dumped after overflow")
                try decide(check: true, emit: emit)
            } else if relevant {
                try syncWatched(refreshAll: false)
                try decide(check: true, emit: emit)
            } else if announced {
                // The probe asks the API itself when it hears of it from the path.
                try decide(check: false, emit: emit)
            }
        }
    }

    /// A link message of the tunnel policy rules send the traffic into: its
    /// going down or away sends the traffic back to the main table's route.
    private func touchesPolicyTunnel(_ message: NetlinkMessage) -> Bool {
        guard let index = tunnelCache?.naming.tunnelIndex else { return false }
        switch message.body {
        case .newLink(let m), .deleteLink(let m): return m.index == index
        default: return false
        }
    }

    /// A main-table route broad enough to take the internet's traffic past the
    /// default route without replacing it (a VPN's /1 pair, which the route
    /// table does not keep): where the traffic goes must be looked up again.
    static func steersTraffic(_ message: NetlinkMessage) -> Bool {
        switch message.body {
        case .newRoute(let r), .deleteRoute(let r):
            r.table == UInt32(LL_RT_TABLE_MAIN) && r.destinationLength > 0
                && UInt32(r.destinationLength) <= EventFilter.broadestSplit
        default: false
        }
    }

    /// Reads every queued datagram. Returns whether any message touched the
    /// decision, whether messages were lost, and whether a captive-portal
    /// announcement changed.
    private func drain() throws(NetlinkSocket.Failure) -> (relevant: Bool, overflowed: Bool, announced: Bool) {
        var relevant = false
        var overflowed = false
        var announced = false
        let now = ContinuousClock.now
        while true {
            switch try events.receive(into: buffer) {
            case .wouldBlock:
                return (relevant, overflowed, announced)
            case .overflow:
                overflowed = true
            case .truncated(let length):
                logger.warning("netlink: \(length)-byte datagram truncated to \(buffer.count)")
                overflowed = true
            case .foreign(let port):
                logger.warning("netlink: dropped a datagram from user-space port \(port), not the kernel")
            case .data(let count):
                let result = NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                for problem in result.problems { logger.warning("netlink: malformed input: \(problem)") }
                for message in result.messages {
                    if case .ndUserOption(let option) = message.body {
                        if let portal = option.captivePortal, announcements.heard(portal, on: option.index, at: now) {
                            announced = true
                        }
                        continue
                    }
                    if table.apply(message) { relevant = true }
                    if message.body == .ruleChanged || touchesPolicyTunnel(message) || Self.steersTraffic(message) {
                        tunnelCache = nil
                        relevant = true
                    }
                }
            }
        }
    }

    /// Links, then addresses, then routes, into a fresh table. A dump the kernel
    /// marks interrupted (NLM_F_DUMP_INTR: the tables changed meanwhile) is repeated.
    private func dump() throws(NetlinkSocket.Failure) -> RouteTable {
        for attempt in 1...5 {
            var fresh = RouteTable()
            var consistent = true
            for type in [LL_RTM_GETLINK, LL_RTM_GETADDR, LL_RTM_GETROUTE] {
                let (messages, complete) = try dumpMessages(type)
                consistent = consistent && complete
                for message in messages { fresh.apply(message) }
            }
            if consistent { return fresh }
            logger.debug("netlink: dump attempt \(attempt) was interrupted by changes; repeating")
        }
        throw NetlinkSocket.Failure(operation: "dump (interrupted 5 times)", errno: EAGAIN)
    }

    /// Lets the link and address events of every interface a default route
    /// uses through the socket filter, and re-reads those that were not
    /// watched (the filter dropped their events, so what the table knows of
    /// them may be old). Watching starts before the re-read: no change is
    /// missed in between. An interface stays watched until it is deleted, so a
    /// route that flaps costs no re-read.
    private func syncWatched(refreshAll: Bool) throws(NetlinkSocket.Failure) {
        let tunnel = tunnelCache?.naming.tunnelIndex.map { [$0] } ?? []
        let next = watched.filter { table.links[$0] != nil }.union(table.nextHopIndexes).union(tunnel)
        let added = refreshAll ? next : next.subtracting(watched)
        if next != watched {
            try events.attach(EventFilter.program(watching: next))
            watched = next
        }
        guard !added.isEmpty else { return }
        for attempt in 1...5 {
            let (links, linksComplete) = try dumpMessages(LL_RTM_GETLINK)
            let (addresses, addressesComplete) = try dumpMessages(LL_RTM_GETADDR)
            if (linksComplete && addressesComplete) || attempt == 5 {
                table.refresh(added, from: links + addresses)
                return
            }
        }
    }

    /// One dump on the dump socket; `complete` is false when the kernel marked
    /// it interrupted or replies were lost.
    private func dumpMessages(_ type: UInt16) throws(NetlinkSocket.Failure) -> (messages: [NetlinkMessage], complete: Bool) {
        let sequence = try dumps.requestDump(type: type)
        var messages: [NetlinkMessage] = []
        var complete = true
        while true {
            guard dumps.waitReadable(timeoutMs: 5000) else {
                throw NetlinkSocket.Failure(operation: "dump (no reply in 5s)", errno: ETIMEDOUT)
            }
            switch try dumps.receive(into: buffer) {
            case .wouldBlock, .foreign:
                continue
            case .overflow, .truncated:
                complete = false
            case .data(let count):
                let result = NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                for problem in result.problems { logger.warning("netlink: malformed dump input: \(problem)") }
                for message in result.messages where message.header.sequence == sequence {
                    if message.header.flags & LL_NLM_F_DUMP_INTR != 0 { complete = false }
                    switch message.body {
                    case .done: return (messages, complete)
                    case .error(let code) where code != 0:
                        throw NetlinkSocket.Failure(operation: "dump \(type)", errno: -code)
                    default: messages.append(message)
                    }
                }
            }
        }
    }

    /// Evaluates, then watches a tunnel the evaluation found by policy rules.
    private func decide(check: Bool, emit: (Event) -> Void) throws(NetlinkSocket.Failure) {
        evaluate(check: check, emit: emit)
        if let tunnel = tunnelCache?.naming.tunnelIndex, !watched.contains(tunnel) { try syncWatched(refreshAll: false) }
    }

    /// Decides and emits when the verdict changed; asks for a check when `check`.
    private func evaluate(check: Bool, emit: (Event) -> Void) {
        var observation: Observation
        if let p = table.primary(deprioritised: settings.deprioritised.matches) {
            let n = naming(p)
            observation = Observation(role: .link, state: .online, interface: n.interface, kind: n.kind, reason: n.reason)
            (observation.underneath, observation.underneathKind) = (n.underneath, n.underneathKind)
            // An announcement speaks for the link it came on, not for a tunnel over it.
            if n.interface == p.name {
                observation.captivePortal = announcements.portal(on: p.index) { reason in
                    logger.warning("netlink: \(p.name): \(reason); not asked")
                }
            }
            lastPrimary = p
        } else {
            let (layer, reason) = table.offline(previous: lastPrimary, deprioritised: settings.deprioritised.matches)
            observation = Observation(role: .link, state: .offline, reason: reason)
            observation.diagnosis = layer
            lastPrimary = nil
        }
        let key = VerdictKey(state: observation.state, interface: observation.interface, kind: observation.kind,
                             diagnosis: observation.diagnosis, captivePortal: observation.captivePortal)
        if key != publishedKey {
            publishedKey = key
            logger.debug("netlink: \(observation.state.rawValue) (\(observation.reason))")
            emit(.update(observation, check: check))
        } else if check {
            emit(.update(nil, check: true))
        }
    }

    /// How the connection is named: the primary interface, or the VPN tunnel
    /// the internet's traffic goes into with the link that carries it.
    struct Naming: Equatable {
        var interface: String
        var kind: InterfaceKind
        var underneath = ""
        var underneathKind = InterfaceKind.none
        var reason: String
        /// The tunnel policy rules send the traffic into: watched like a
        /// default route's interface, so its going down or away is heard.
        var tunnelIndex: Int32?
    }

    /// The tunnel is found two ways: the default route itself goes into it
    /// (a host route keeps the VPN server reachable underneath), or something
    /// else sends the internet's traffic into it while the main table's
    /// default stays on the link: policy rules (`wg-quick`), or a pair of
    /// broad routes (OpenVPN's `redirect-gateway def1`). The kernel's route
    /// lookup for a documentation address, the way any packet to the internet
    /// would go, tells. Read once per primary interface, and again after a rule
    /// change, a broad route's change or the tunnel's own (a route lookup, and
    /// a route and neighbour dump for a tunnel, on sockets of their own).
    private func naming(_ p: RouteTable.Primary) -> Naming {
        if let c = tunnelCache, c.index == p.index, c.name == p.name { return c.naming }
        var found = Naming(interface: p.name, kind: kind(p), reason: "default route via \(p.name)")
        let sys = settings.kinds.sysfsRoot
        if TunnelReader.tunnelKind(p.name, sys: sys) != nil {
            (found.underneath, found.underneathKind) = carrier(of: p.name)
        } else if let hop = (try? TunnelReader.route(to: "192.0.2.1")) ?? (try? TunnelReader.route(to: "2001:db8::1")),
                  hop.interface != p.name, TunnelReader.tunnelKind(hop.interface, sys: sys) != nil {
            let (underneath, underneathKind) = carrier(of: hop.interface)
            found = Naming(interface: hop.interface, kind: .vpn,
                           underneath: underneath.isEmpty ? p.name : underneath,
                           underneathKind: underneath.isEmpty ? found.kind : underneathKind,
                           reason: "default route via \(p.name), \(hop.table == UInt32(LL_RT_TABLE_MAIN) ? "routes" : "policy rules") send it into \(hop.interface)",
                           tunnelIndex: hop.index)
        }
        tunnelCache = (p.index, p.name, found)
        return found
    }

    /// The link that carries a tunnel's own datagrams, with its kind; ("", .none) when unknown.
    private func carrier(of tunnel: String) -> (String, InterfaceKind) {
        let wireGuard = WireGuardState.read(tunnel)
        guard let carrier = TunnelReader.carrier(of: tunnel, endpoint: wireGuard?.endpoint, mark: wireGuard?.fwmark ?? 0)
        else { return ("", .none) }
        let link = table.links.values.first { $0.name == carrier.interface }
        return (carrier.interface, link.map { settings.kinds.kind(of: $0) } ?? .other)
    }

    private func kind(_ p: RouteTable.Primary) -> InterfaceKind {
        if let c = kindCache, c.index == p.index, c.name == p.name { return c.kind }
        guard let link = table.links[p.index] else { return .other }
        let kind = settings.kinds.kind(of: link)
        kindCache = (p.index, p.name, kind)
        return kind
    }
}
