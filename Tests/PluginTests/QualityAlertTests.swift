import LifelineCore
import LifelinePlatform
import LifelineTOML
import Testing
@testable import NotifySink

/// The opt-in toast for a connection that stays poor: one per episode, never in
/// an outage's way, as `QualityAlert` decides it. Time is the test's (µs).
@Suite struct QualityAlertTests {
    static let second: Int64 = 1_000_000
    let hold = 120 * second

    func alert() -> QualityAlert { QualityAlert(hold: .seconds(120), translator: .english) }

    func update(_ level: QualityLevel?, state: ConnectivityState = .online, muted: Int64 = 0,
                outage: Outage? = nil) -> Update {
        var event = StateEvent(state: state, previous: .online, since: 0, interface: "wlan0", reason: "", sequence: 1)
        event.quality = level.map {
            Quality(level: $0, rttMs: 1234, retransmitShare: 0.08, connections: 9, remotes: 4, reason: "")
        }
        return Update(event: event, isTransition: false, outage: outage, mutedUntil: muted)
    }

    func shows(_ actions: [QualityAlert.Action]) -> Bool {
        guard actions.count == 1, case .show = actions[0] else { return false }
        return true
    }

    /// Feeds `level` at each of `times` (seconds), as updates and the timer's ticks would; counts the toasts.
    func toasts(_ a: inout QualityAlert, _ steps: [(Int64, QualityLevel?)]) -> Int {
        steps.reduce(0) { n, step in n + (shows(a.take(update(step.1), now: step.0 * Self.second)) ? 1 : 0) }
    }

    @Test func offByDefaultAndTheHoldIsValidated() throws {
        let defaults = try NotifySink.Config.decode(toml: "")
        #expect(defaults.qualityAlert == false)
        #expect(defaults.qualityAlertAfter == .seconds(120))
        let on = try NotifySink.Config.decode(toml: "quality_alert = true\nquality_alert_after = \"5m\"")
        #expect(on.qualityAlert && on.qualityAlertAfter == .seconds(300))
        #expect(throws: (any Error).self) { try NotifySink.Config.decode(toml: "quality_alert_after = \"1s\"") }
        #expect(throws: (any Error).self) { try NotifySink.Config.decode(toml: "quality_alert_after = \"2h\"") }
    }

    @Test func poorForLessThanTheHoldShowsNothing() {
        var a = alert()
        #expect(toasts(&a, [(0, .good), (10, .poor), (60, .poor), (129, .degraded), (200, .good), (400, .good)]) == 0)
        #expect(!a.isShowing)
    }

    @Test func poorHeldShowsExactlyOneToastWithTheNumbersInWords() throws {
        var a = alert()
        #expect(a.take(update(.poor), now: 0) == [])
        // The sink wakes itself for the end of the hold: no update needs to come.
        #expect(a.nextCheck == hold)
        let actions = a.take(update(.poor), now: hold)
        guard actions.count == 1, case .show(let toast) = actions[0] else {
            Issue.record("expected one toast, got \(actions)")
            return
        }
        #expect(toast.summary == "Connection is poor")
        #expect(toast.body == "8 % of packets resent, round trip 1.2 s.")
        #expect(toast.urgency == .normal)
        #expect(toast.category != "network.disconnected")
        #expect(a.isShowing)
        #expect(toasts(&a, [(200, .poor), (300, .poor), (900, .poor)]) == 0)
    }

    @Test func flappingBetweenPoorAndDegradedIsStillOneEpisode() {
        var a = alert()
        let flaps: [(Int64, QualityLevel?)] = [(0, .poor), (120, .poor), (150, .degraded), (200, .poor), (260, .degraded),
                                              (300, .poor), (400, .degraded), (519, .degraded), (520, .poor), (700, .poor)]
        #expect(toasts(&a, flaps) == 1)
        #expect(a.isShowing)
    }

    @Test func afterRecoveryANewEpisodeToastsAgainAndTheOldToastCloses() {
        var a = alert()
        #expect(toasts(&a, [(0, .poor), (120, .poor)]) == 1)
        #expect(a.take(update(.good), now: 200 * Self.second) == [])
        #expect(a.nextCheck == 200 * Self.second + hold)
        // Good (or degraded) for the hold ends the episode, and its toast closes itself.
        #expect(a.take(update(.good), now: 320 * Self.second) == [.close])
        #expect(!a.isShowing)
        #expect(toasts(&a, [(400, .poor), (519, .poor), (520, .poor), (600, .poor)]) == 1)
    }

    @Test func leavingOnlineClosesTheQualityToastAndEndsTheEpisode() {
        var a = alert()
        var outageToasts = ToastPolicy(translator: .english)
        #expect(toasts(&a, [(0, .poor), (120, .poor)]) == 1)
        // The sink hands each update to both, the quality alert first: the quality
        // toast steps aside at once, and the outage toast is the only one on screen.
        let offline = update(nil, state: .offline, outage: Outage(id: 1, since: 0, worst: .offline))
        #expect(a.take(offline, now: 130 * Self.second) == [.close])
        let outage = outageToasts.take(offline, now: 130 * Self.second)
        guard outage.count == 1, case .show(let toast) = outage[0] else {
            Issue.record("expected the outage toast, got \(outage)")
            return
        }
        #expect(toast.summary == "Offline")
        #expect(!a.isShowing && outageToasts.isShowing)
        #expect(a.take(offline, now: 140 * Self.second) == [])
        #expect(a.nextCheck == nil, "no wake-up while offline")
        // Back online and still poor: a new episode, which must hold again.
        #expect(a.take(update(.poor), now: 150 * Self.second) == [])
        #expect(toasts(&a, [(269, .poor), (270, .poor)]) == 1)
    }

    @Test func mutedShowsNothingAndMutingClosesTheToast() {
        var a = alert()
        let muteEnd = 1_000 * Self.second
        #expect(a.take(update(.poor, muted: muteEnd), now: 0) == [])
        #expect(a.take(update(.poor, muted: muteEnd), now: hold) == [])
        // The sink wakes when the mute ends: an episode still going is shown then, once.
        #expect(a.nextCheck == muteEnd)
        #expect(shows(a.take(update(.poor, muted: muteEnd), now: muteEnd)))
        // Muted again while it shows: it closes, and does not come back in this episode.
        #expect(a.take(update(.poor, muted: 2 * muteEnd), now: muteEnd + Self.second) == [.close])
        #expect(a.take(update(.poor), now: 3 * muteEnd) == [])

        // Muted throughout: an episode comes and goes without a word.
        var muted = alert()
        for t in stride(from: Int64(0), through: 600, by: 30) {
            #expect(muted.take(update(t < 300 ? .poor : .good, muted: 10_000 * Self.second), now: t * Self.second) == [])
        }
    }

    @Test func aToastTheUserDismissedStaysGoneForTheEpisode() {
        var a = alert()
        #expect(toasts(&a, [(0, .poor), (120, .poor)]) == 1)
        a.closedByServer()
        #expect(!a.isShowing)
        #expect(toasts(&a, [(200, .poor), (400, .poor)]) == 0)
        // Its end closes nothing: nothing of ours is on screen.
        #expect(a.take(update(.good), now: 500 * Self.second) == [])
        #expect(a.take(update(.good), now: 620 * Self.second) == [])
    }

    @Test func theNumbersInWords() {
        #expect(QualityAlert.percent(0.08) == "8")
        #expect(QualityAlert.percent(0.3) == "30")
        #expect(QualityAlert.percent(0.025) == "2.5")
        #expect(QualityAlert.milliseconds(850.4) == "850 ms")
        #expect(QualityAlert.milliseconds(1234) == "1.2 s")
        let dns = QualityAlert.toast(for: Quality(level: .poor, dnsFailures: 3))
        #expect(dns.body == "3 name lookups failed.")
    }
}
