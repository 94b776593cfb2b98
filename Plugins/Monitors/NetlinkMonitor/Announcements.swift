import LifelineCore
import LifelineNet

/// The captive-portal APIs networks announced, per interface index: from
/// Router Advertisements (kept for `lifetime` after the last one that carried
/// it) and from networkd's link state. An announcement goes with its
/// interface. Confined to the netlink loop's thread.
struct Announcements {
    struct FromRA {
        var option: CaptivePortalOption
        var expires: ContinuousClock.Instant
    }

    var lifetime: Duration
    private(set) var ra: [Int32: FromRA] = [:]
    private(set) var networkd: [Int32: CaptivePortalOption] = [:]
    /// The reason last logged per interface, so a network repeating a bad
    /// announcement thousands of times a second is logged once.
    private var lastRefusal: [Int32: String] = [:]

    init(lifetime: Duration) { self.lifetime = lifetime }

    /// Takes an RA's option; true when what the interface announces changed.
    /// The same announcement again only extends its life.
    mutating func heard(_ option: CaptivePortalOption, on index: Int32, at now: ContinuousClock.Instant) -> Bool {
        let before = ra[index]?.option
        ra[index] = FromRA(option: option, expires: now.advanced(by: lifetime))
        return before != option
    }

    /// Replaces what networkd's files say; true when it changed.
    mutating func networkd(_ found: [Int32: CaptivePortalOption]) -> Bool {
        guard found != networkd else { return false }
        networkd = found
        return true
    }

    /// Forgets announcements of interfaces that are gone and RA options whose
    /// lifetime ended; true when any was forgotten.
    mutating func prune(links: some Collection<Int32>, at now: ContinuousClock.Instant) -> Bool {
        let alive = Set(links)
        let before = (ra.count, networkd.count)
        ra = ra.filter { alive.contains($0.key) && $0.value.expires > now }
        networkd = networkd.filter { alive.contains($0.key) }
        lastRefusal = lastRefusal.filter { alive.contains($0.key) }
        return before != (ra.count, networkd.count)
    }

    /// When the next RA announcement runs out, if any.
    var nextExpiry: ContinuousClock.Instant? { ra.values.map(\.expires).min() }

    /// The API announced on `index`, the RA's first (straight from the
    /// router), else networkd's. Nil when none, or when the network said it
    /// has no portal. A refused one is reported once through `refused`.
    mutating func portal(on index: Int32, refused: (String) -> Void) -> CaptivePortal? {
        let candidates: [(CaptivePortalOption, CaptivePortalSource)] =
            [ra[index].map { ($0.option, .ra) }, networkd[index].map { ($0, .networkd) }].compactMap { $0 }
        for (option, source) in candidates {
            switch option {
            case .api(let url):
                lastRefusal[index] = nil
                return CaptivePortal(api: url, source: source)
            case .unrestricted:
                return nil
            case .refused(let reason):
                if lastRefusal[index] != reason {
                    lastRefusal[index] = reason
                    refused(reason)
                }
            }
        }
        return nil
    }
}
