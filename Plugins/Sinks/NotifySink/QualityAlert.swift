import LifelineCore
import LifelinePlatform

/// The opt-in toast for a connection that stays poor (`quality_alert`), as a
/// pure state machine beside `ToastPolicy`: fed every update the sink takes
/// (and a timer's tick at `nextCheck`), it says when to show or close the
/// quality toast. It has a toast of its own, so it never replaces or disturbs
/// an outage toast.
///
/// - An episode begins when the quality has been `poor` for `hold` while
///   `online`, and gets one toast, never updated or shown again.
/// - It ends when the quality has not been `poor` (good, degraded or unknown)
///   for `hold`, or at once when the state leaves `online` (the outage toast
///   takes over). Its toast closes then; only a new episode toasts again.
/// - While muted or while alerts are held nothing shows and the toast on
///   screen closes; an episode whose toast was never shown gets it when the
///   mute ends, one whose toast was shown does not.
public struct QualityAlert: Sendable {
    public enum Action: Equatable, Sendable {
        case show(Toast)
        case close
    }

    /// How long poor must hold before the toast, and good must hold before the episode ends (µs).
    public let hold: Int64
    public var translator: Translator
    /// Since when the quality has been poor while online (the run that may become an episode).
    private var poorSince: Int64?
    private var inEpisode = false
    /// Within the episode: since when it has not been poor.
    private var notPoorSince: Int64?
    private var toasted = false
    private var showing = false
    private var serverPresent = true
    /// An episode's toast waits for this mute to end.
    private var waitingForMute: Int64?

    public init(hold: Duration, translator: Translator = .user) {
        let (s, atto) = hold.components
        self.hold = s * 1_000_000 + atto / 1_000_000_000_000
        self.translator = translator
    }

    public var isShowing: Bool { showing }

    /// When the decision may change though no update comes: a hold or a mute runs out.
    public var nextCheck: Int64? {
        let hold = inEpisode ? notPoorSince.map { $0 + self.hold } : poorSince.map { $0 + self.hold }
        return [hold, waitingForMute].compactMap { $0 }.min()
    }

    public mutating func take(_ update: Update, now: Int64) -> [Action] {
        guard update.event.state == .online else {
            endEpisode()
            return closeIfShowing()
        }
        if update.event.quality?.level == .poor {
            notPoorSince = nil
            let since = poorSince ?? now
            poorSince = since
            if now - since >= hold { inEpisode = true }
        } else {
            poorSince = nil
            if inEpisode {
                let since = notPoorSince ?? now
                notPoorSince = since
                if now - since >= hold {
                    endEpisode()
                    return closeIfShowing()
                }
            }
        }
        waitingForMute = inEpisode && !toasted && update.isMuted(at: now) ? update.mutedUntil : nil
        if update.isMuted(at: now) || update.alertsHeld || !serverPresent { return closeIfShowing() }
        guard inEpisode, !toasted, let quality = update.event.quality else { return [] }
        toasted = true
        showing = true
        return [.show(Self.toast(for: quality, translator))]
    }

    /// The server closed the toast (expired or dismissed): the episode goes on, silently.
    public mutating func closedByServer() { showing = false }

    public mutating func serverVanished() {
        serverPresent = false
        showing = false
    }

    public mutating func serverAppeared() { serverPresent = true }

    private mutating func endEpisode() {
        poorSince = nil
        inEpisode = false
        notPoorSince = nil
        toasted = false
        waitingForMute = nil
    }

    private mutating func closeIfShowing() -> [Action] {
        guard showing else { return [] }
        showing = false
        return [.close]
    }
}
