import LifelineCore
import LifelinePlatform

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

    /// The language of the toast, as every other toast of the sink.
    var translator: Translator

    init(time: Duration, bytes: Int64, translator: Translator = .user) {
        self.time = time
        self.bytes = bytes
        self.translator = translator
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
        let t = translator
        let wifi = e.kind == .wifi
        var summary: String?
        if let endsAt, endsAt > now, endsAt - now <= time.microseconds {
            let minutes = Int(max(1, (endsAt - now + 59_999_999) / 60_000_000))
            let count = String(minutes)
            summary = wifi
                ? t.trn("Wi-Fi session ends in {count} min", "Wi-Fi session ends in {count} min", minutes, ["count": count])
                : t.trn("Network session ends in {count} min", "Network session ends in {count} min", minutes, ["count": count])
        }
        if summary == nil, let b = portal.bytesRemaining, b <= bytes {
            let amount = CaptivePortal.amount(b)
            summary = wifi ? t.tr("Wi-Fi session ends with {amount} left", ["amount": amount])
                           : t.tr("Network session ends with {amount} left", ["amount": amount])
        }
        guard let summary else { return nil }
        warned = true
        let extendable = portal.canExtendSession == true
        var toast = Toast(
            summary: summary,
            body: extendable ? t.tr("The network's sign-in page can extend it.")
                             : t.tr("Then the network asks you to sign in again."),
            icon: "network-wireless", urgency: .normal, hasActions: false, timeout: -1)
        toast.labels = Toast.Labels(t)
        toast.extendsSession = extendable && portal.userPortalURL != nil
        toast.category = "network"
        return toast
    }
}
