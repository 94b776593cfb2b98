import LifelineCore

/// The one toast before a network's session runs out, as its captive-portal
/// API (RFC 8908) counts it: "Wi-Fi session ends in 10 min" once the
/// `seconds_remaining` it gave has run down to `time`, or once
/// `bytes_remaining` is at most `bytes`; with "Extend" where the API says the
/// session can be extended (the sign-in page is where that is done). One
/// toast per session: the API's word that the user must sign in again (or its
/// going away) starts the next one. A pure state machine over updates and
/// instants, so it is tested without a desktop.
struct SessionWarning: Sendable {
    var time: Duration
    var bytes: Int64

    /// The answer last taken, so a repeated update does not restart the count.
    private var portal: CaptivePortal?
    /// When the session ends (µs since the epoch), from the answer's count and the moment it came.
    private(set) var endsAt: Int64?
    private var warned = false

    init(time: Duration, bytes: Int64) {
        self.time = time
        self.bytes = bytes
    }

    /// When the toast falls due by time alone, µs since the epoch; nil when it never does.
    var dueAt: Int64? {
        guard !warned, let endsAt else { return nil }
        return endsAt - time.microseconds
    }

    /// Takes the state at `now` (µs since the epoch); returns the toast when one is due.
    mutating func take(_ e: StateEvent, now: Int64) -> Toast? {
        if e.captivePortal != portal {
            let next = e.captivePortal
            if next?.captive != false || next?.api != portal?.api { warned = false }
            portal = next
            endsAt = next.flatMap { $0.captive == false ? $0.secondsRemaining : nil }.map { now + $0 * 1_000_000 }
        }
        return due(e, now: now)
    }

    /// The toast, if it is due at `now` and the state is online (a toast of
    /// the outage holds the screen otherwise; the warning waits for it).
    mutating func due(_ e: StateEvent, now: Int64) -> Toast? {
        guard !warned, e.state == .online, let portal, portal.captive == false else { return nil }
        var left: String?
        if let endsAt, endsAt > now, endsAt - now <= time.microseconds {
            left = "in \(max(1, (endsAt - now + 59_999_999) / 60_000_000)) min"
        }
        if left == nil, let b = portal.bytesRemaining, b <= bytes {
            left = "with \(b >= 1_000_000 ? "\(b / 1_000_000) MB" : "\(b / 1000) kB") left"
        }
        guard let left else { return nil }
        warned = true
        let network = e.kind == .wifi ? "Wi-Fi" : "Network"
        var toast = Toast(
            summary: "\(network) session ends \(left)",
            body: portal.canExtendSession == true ? "The network's sign-in page can extend it." : "Then the network asks you to sign in again.",
            icon: "network-wireless", urgency: .normal, hasActions: false, timeout: -1)
        toast.extendsSession = portal.canExtendSession == true && portal.userPortalURL != nil
        toast.category = "network"
        return toast
    }
}
