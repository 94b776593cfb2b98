import CNetlink
import LifelineCore

/// What the kernel's link, address and route tables say about one question:
/// is there a usable default route, and through which interface?
///
/// Pure: fed parsed messages (from a dump or from multicast), no I/O. Only
/// main-table default routes are kept; everything else cannot change the answer.
///
/// Kernel behaviours it models (each checked in a network namespace):
/// - An interface going down flushes its IPv4 routes with no `RTM_DELROUTE`
///   (IPv6 deletions are announced). Removing an interface's last IPv4 address
///   does the same; removing an address also flushes routes that use it as
///   `prefsrc`. A multipath route only loses the dead next hop, which revives
///   when the interface comes back up.
/// - Carrier loss keeps the routes; the interface loses `IFF_RUNNING`. The
///   `RTNH_F_LINKDOWN` flag in a route message is only a snapshot (no message
///   clears it when the carrier returns), so the live link flags decide instead.
/// - `NLM_F_REPLACE` replaces a route (maybe by a blackhole) with no delete.
package struct RouteTable: Sendable {
    package struct Link: Equatable, Sendable {
        package var index: Int32
        package var name: String
        package var flags: UInt32
        package var hardwareType: UInt16
        package var infoKind: String?

        package var isUsable: Bool {
            flags & LL_IFF_UP != 0 && flags & LL_IFF_RUNNING != 0 && flags & LL_IFF_LOOPBACK == 0
        }
    }

    package struct Address: Equatable, Hashable, Sendable {
        package var family: UInt8
        package var prefixLength: UInt8
        package var bytes: [UInt8]
    }

    /// A main-table default route (any type: a blackhole default still replaces
    /// a unicast one). Routes with the same key are what `NLM_F_REPLACE` replaces.
    package struct Route: Equatable, Sendable {
        package var family: UInt8
        package var tos: UInt8
        package var priority: UInt32
        package var type: UInt8
        package var preferredSource: [UInt8]
        package var nextHops: [Hop]

        package struct Hop: Equatable, Sendable {
            package var index: Int32
            package var gateway: [UInt8]
            /// Dead because its interface went down (IPv4 multipath keeps the route).
            package var dead: Bool
        }

        package func sameKey(_ other: Route) -> Bool {
            family == other.family && tos == other.tos && priority == other.priority
        }
    }

    /// The interface that carries the chosen default route.
    package struct Primary: Equatable, Sendable {
        package var index: Int32
        package var name: String
        package var family: UInt8
        package var priority: UInt32
    }

    package private(set) var links: [Int32: Link] = [:]
    package private(set) var addresses: [Int32: Set<Address>] = [:]
    package private(set) var routes: [Route] = []
    /// Why IPv4 routes of an interface were flushed by an address removal, for the reason line.
    private var addressFlush: [Int32: String] = [:]

    package init() {}

    // MARK: Feeding

    /// Applies one message; returns true when it can touch the decision (a
    /// default route changed, or an interface or address that a default route
    /// uses did). Interfaces no default route uses (veth churn) return false.
    @discardableResult
    package mutating func apply(_ message: NetlinkMessage) -> Bool {
        switch message.body {
        case .newLink(let m): return newLink(m)
        case .deleteLink(let m): return deleteLink(m.index)
        case .newAddress(let m):
            guard let address = Self.address(m) else { return false }
            let inserted = addresses[m.index, default: []].insert(address).inserted
            return inserted && usesInterface(m.index)
        case .deleteAddress(let m): return deleteAddress(m)
        case .newRoute(let m):
            guard let route = Self.defaultRoute(m) else { return false }
            return addRoute(route, replace: message.header.flags & LL_NLM_F_REPLACE != 0)
        case .deleteRoute(let m):
            guard let route = Self.defaultRoute(m) else { return false }
            return deleteRoute(route)
        case .done, .error, .ignored, .newNeighbour, .ruleChanged, .ndUserOption:
            return false
        }
    }

    private mutating func newLink(_ m: LinkMessage) -> Bool {
        let used = usesInterface(m.index)
        let old = links[m.index]
        let link = Link(index: m.index, name: m.name ?? old?.name ?? "if\(m.index)", flags: m.flags,
                        hardwareType: m.hardwareType, infoKind: m.infoKind ?? old?.infoKind)
        links[m.index] = link
        let wasUp = (old?.flags ?? 0) & LL_IFF_UP != 0
        let isUp = link.flags & LL_IFF_UP != 0
        if old != nil, wasUp, !isUp { flushIPv4(on: m.index) }
        if !wasUp, isUp { revive(m.index) }
        let watched = LL_IFF_UP | LL_IFF_RUNNING | LL_IFF_LOOPBACK
        let changed = old == nil || old!.name != link.name || (old!.flags ^ link.flags) & watched != 0
        // While offline, an interface coming up or getting its carrier changes
        // which layer is missing, even with no route through it yet.
        return changed && (used || usesInterface(m.index) || primary() == nil)
    }

    private mutating func deleteLink(_ index: Int32) -> Bool {
        let used = usesInterface(index)
        links[index] = nil
        addresses[index] = nil
        addressFlush[index] = nil
        removeHops { $0.index == index }
        return used
    }

    private mutating func deleteAddress(_ m: AddressMessage) -> Bool {
        guard let address = Self.address(m) else { return false }
        addresses[m.index]?.remove(address)
        let used = usesInterface(m.index)
        guard m.family == 2 else { return used }
        // The kernel drops routes whose preferred source was this address…
        routes.removeAll { $0.family == 2 && $0.preferredSource == address.bytes }
        // …and every IPv4 route of the interface once its last IPv4 address is gone.
        if !(addresses[m.index] ?? []).contains(where: { $0.family == 2 }) {
            let name = links[m.index]?.name ?? "if\(m.index)"
            addressFlush[m.index] = "address \(Self.text(address)) removed from \(name)"
            flushIPv4(on: m.index)
        }
        return used
    }

    private mutating func addRoute(_ route: Route, replace: Bool) -> Bool {
        for hop in route.nextHops { addressFlush[hop.index] = nil }
        if replace {
            if route.family == 10 {
                // IPv6 keeps equal-key siblings as one ECMP route: replace them all.
                if let first = routes.firstIndex(where: { $0.sameKey(route) }) {
                    routes.removeAll { $0.sameKey(route) }
                    routes.insert(route, at: min(first, routes.count))
                    return true
                }
            } else if let i = routes.firstIndex(where: { $0.sameKey(route) }) {
                routes[i] = route
                return true
            }
        }
        // A dump replayed over notifications repeats routes: keep one copy.
        if !routes.contains(route) { routes.append(route) }
        return true
    }

    private mutating func deleteRoute(_ route: Route) -> Bool {
        if let i = routes.firstIndex(of: route) {
            routes.remove(at: i)
            return true
        }
        let hops = Set(route.nextHops.map { HopKey(index: $0.index, gateway: $0.gateway) })
        if !hops.isEmpty {
            // An IPv6 ECMP sibling deleted alone: drop just those next hops.
            var found = false
            for i in routes.indices where routes[i].sameKey(route) {
                let before = routes[i].nextHops.count
                routes[i].nextHops.removeAll { hops.contains(HopKey(index: $0.index, gateway: $0.gateway)) }
                found = found || routes[i].nextHops.count != before
            }
            routes.removeAll { $0.nextHops.isEmpty && $0.type == LL_RTN_UNICAST }
            if found { return true }
        }
        if let i = routes.firstIndex(where: { $0.sameKey(route) && $0.type == route.type }) {
            routes.remove(at: i)
        }
        return true
    }

    private struct HopKey: Hashable {
        package var index: Int32
        package var gateway: [UInt8]
    }

    /// The silent IPv4 flush of an interface going down: single-path routes go,
    /// multipath routes keep the hop marked dead until the interface is up again.
    private mutating func flushIPv4(on index: Int32) {
        for i in routes.indices where routes[i].family == 2 {
            for h in routes[i].nextHops.indices where routes[i].nextHops[h].index == index {
                routes[i].nextHops[h].dead = true
            }
        }
        routes.removeAll { $0.family == 2 && !$0.nextHops.isEmpty && $0.nextHops.allSatisfy(\.dead) }
    }

    private mutating func revive(_ index: Int32) {
        for i in routes.indices where routes[i].family == 2 {
            for h in routes[i].nextHops.indices where routes[i].nextHops[h].index == index {
                routes[i].nextHops[h].dead = false
            }
        }
    }

    private mutating func removeHops(where predicate: (Route.Hop) -> Bool) {
        for i in routes.indices { routes[i].nextHops.removeAll(where: predicate) }
        routes.removeAll { $0.nextHops.isEmpty && $0.type == LL_RTN_UNICAST }
    }

    /// Interfaces some default route goes through.
    package var nextHopIndexes: Set<Int32> {
        Set(routes.flatMap { $0.nextHops.map(\.index) }.filter { $0 > 0 })
    }

    /// Replaces what is known of `indexes` by a fresh link and address dump
    /// (for interfaces whose events the socket filter was dropping).
    package mutating func refresh(_ indexes: Set<Int32>, from dumped: [NetlinkMessage]) {
        for index in indexes {
            var link: LinkMessage?
            var fresh: Set<Address> = []
            for message in dumped {
                switch message.body {
                case .newLink(let m) where m.index == index: link = m
                case .newAddress(let m) where m.index == index: if let a = Self.address(m) { fresh.insert(a) }
                default: break
                }
            }
            guard let link else {
                _ = deleteLink(index)
                continue
            }
            links[index] = Link(index: index, name: link.name ?? links[index]?.name ?? "if\(index)", flags: link.flags,
                                hardwareType: link.hardwareType, infoKind: link.infoKind)
            addresses[index] = fresh
        }
    }

    private func usesInterface(_ index: Int32) -> Bool {
        routes.contains { $0.nextHops.contains { $0.index == index } }
    }

    private static func address(_ m: AddressMessage) -> Address? {
        m.address.isEmpty ? nil : Address(family: m.family, prefixLength: m.prefixLength, bytes: m.address)
    }

    /// The route as kept here, or nil when it is not a main-table default route.
    private static func defaultRoute(_ m: RouteMessage) -> Route? {
        guard m.destinationLength == 0, m.table == UInt32(LL_RT_TABLE_MAIN), m.family == 2 || m.family == 10 else {
            return nil
        }
        let hops = m.nextHops.map { Route.Hop(index: $0.index, gateway: $0.gateway, dead: $0.flags & LL_RTNH_F_DEAD != 0) }
        return Route(family: m.family, tos: m.tos, priority: m.priority, type: m.type,
                     preferredSource: m.preferredSource, nextHops: hops)
    }

    // MARK: The answer

    /// The usable default route with the lowest metric; ties go to interfaces
    /// that are not `deprioritised` (docker0, veth…), then IPv4, then the lower index.
    package func primary(deprioritised: (String) -> Bool = { _ in false }) -> Primary? {
        var best: (key: (UInt32, Int, Int, Int32), primary: Primary)?
        for route in routes where route.type == LL_RTN_UNICAST {
            for hop in route.nextHops where !hop.dead {
                guard let link = links[hop.index], link.isUsable else { continue }
                let key = (route.priority, deprioritised(link.name) ? 1 : 0, route.family == 2 ? 0 : 1, link.index)
                if best.map({ key < $0.key }) ?? true {
                    best = (key, Primary(index: link.index, name: link.name, family: route.family, priority: route.priority))
                }
            }
        }
        return best?.primary
    }

    /// Why there is no usable default route, given the interface that carried
    /// it before (if any): the lowest layer missing, and one sentence.
    package func offline(previous: Primary?, deprioritised: (String) -> Bool = { _ in false }) -> (layer: Diagnosis, reason: String) {
        let reason = offlineReason(previous: previous)
        if let p = previous {
            guard let link = links[p.index] else { return (.link, reason) }
            if let layer = Self.layer(of: link) { return (layer, reason) }
            if p.family == 2, addressFlush[p.index] != nil { return (.address, reason) }
            return (.route, reason)
        }
        for route in routes {
            if route.type != LL_RTN_UNICAST { return (.route, reason) }
            for hop in route.nextHops {
                if let link = links[hop.index], let layer = Self.layer(of: link) { return (layer, reason) }
            }
        }
        guard routes.isEmpty else { return (.route, reason) }
        // No default route at all: say how far the interfaces that could carry
        // one got (docker and the like are no candidates while others exist).
        let all = links.values.filter { $0.flags & LL_IFF_LOOPBACK == 0 }.sorted { $0.index < $1.index }
        let preferred = all.filter { !deprioritised($0.name) }
        let candidates = preferred.isEmpty ? all : preferred
        let up = candidates.filter { $0.flags & LL_IFF_UP != 0 }
        guard let firstUp = up.first else { return (.link, "no network interface is up") }
        let running = up.filter(\.isUsable)
        guard let firstRunning = running.first else { return (.carrier, "\(firstUp.name) has no carrier") }
        guard running.contains(where: hasRoutableAddress) else { return (.address, "\(firstRunning.name) has no address") }
        return (.route, reason)
    }

    /// An address other than IPv6 link-local (fe80::/10), which reaches no router on its own.
    private func hasRoutableAddress(_ link: Link) -> Bool {
        (addresses[link.index] ?? []).contains { a in
            a.family == 2 || (a.family == 10 && !(a.bytes.count == 16 && a.bytes[0] == 0xFE && a.bytes[1] & 0xC0 == 0x80))
        }
    }

    private static func layer(of link: Link) -> Diagnosis? {
        if link.flags & LL_IFF_LOOPBACK != 0 || link.flags & LL_IFF_UP == 0 { return .link }
        if link.flags & LL_IFF_RUNNING == 0 { return .carrier }
        return nil
    }

    /// One sentence for why there is no usable default route, given the
    /// interface that carried it before (if any).
    package func offlineReason(previous: Primary?) -> String {
        if let p = previous {
            guard let link = links[p.index] else { return "\(p.name) was removed" }
            if let why = linkProblem(link) { return why }
            if p.family == 2, let why = addressFlush[p.index] { return why }
            if let replaced = routes.first(where: { $0.family == p.family && $0.type != LL_RTN_UNICAST }) {
                return "default route via \(link.name) replaced by \(Self.typeName(replaced.type)) route"
            }
            return "default route via \(link.name) removed"
        }
        // Nothing was usable before: say what stands in the way, if anything.
        for route in routes {
            if route.type != LL_RTN_UNICAST { return "default route is \(Self.typeName(route.type)) route" }
            for hop in route.nextHops {
                guard let link = links[hop.index] else { continue }
                if let why = linkProblem(link) { return "default route via \(link.name) unusable: \(why)" }
            }
        }
        return "no default route"
    }

    private func linkProblem(_ link: Link) -> String? {
        if link.flags & LL_IFF_LOOPBACK != 0 { return "\(link.name) is a loopback interface" }
        if link.flags & LL_IFF_UP == 0 { return "\(link.name) is down" }
        if link.flags & LL_IFF_RUNNING == 0 { return "carrier lost on \(link.name)" }
        return nil
    }

    /// With its article: "a blackhole", "an unreachable".
    private static func typeName(_ type: UInt8) -> String {
        switch type {
        case 6: "a blackhole"
        case 7: "an unreachable"
        case 8: "a prohibit"
        case 9: "a throw"
        default: "a type-\(type)"
        }
    }

    /// "10.0.0.2/24", "fd00::2/64" (full hex groups; enough for a log line).
    package static func text(_ a: Address) -> String {
        if a.family == 2, a.bytes.count == 4 {
            return a.bytes.map(String.init).joined(separator: ".") + "/\(a.prefixLength)"
        }
        var groups: [String] = []
        var i = 0
        while i + 1 < a.bytes.count {
            groups.append(String(UInt16(a.bytes[i]) << 8 | UInt16(a.bytes[i + 1]), radix: 16))
            i += 2
        }
        return groups.joined(separator: ":") + "/\(a.prefixLength)"
    }
}
