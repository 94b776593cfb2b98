import LifelineCore
import Testing
@testable import NotifySink

/// The toast while alerts are held (sleep, resume grace, inactive session).
@Suite struct ToastHoldTests {
    func update(_ state: ConnectivityState, outage: Outage?, held: Bool, transition: Bool = true) -> Update {
        var u = Update(event: StateEvent(state: state, previous: .online, since: 1_000_000,
                                         interface: state == .offline ? "" : "wlan0", reason: "", sequence: 1),
                       isTransition: transition, outage: outage)
        u.alertsHeld = held
        return u
    }

    func outage(_ id: UInt64, over: Bool = false) -> Outage {
        Outage(id: id, since: 0, worst: .offline, endedAt: over ? 5_000_000 : nil)
    }

    @Test func anOutageDuringTheHoldShowsWhenTheHoldLifts() {
        var p = ToastPolicy()
        #expect(p.take(update(.offline, outage: outage(1), held: true), now: 0) == [])
        let actions = p.take(update(.offline, outage: outage(1), held: false, transition: false), now: 0)
        guard actions.count == 1, case .show(let toast) = actions[0] else {
            Issue.record("expected one new toast, got \(actions)")
            return
        }
        #expect(toast.summary == "Offline")
    }

    @Test func anOutageThatEndedDuringTheHoldShowsNothing() {
        var p = ToastPolicy()
        #expect(p.take(update(.offline, outage: outage(1), held: true), now: 0) == [])
        #expect(p.take(update(.online, outage: outage(1, over: true), held: true), now: 0) == [])
        // No "Back online" for an outage the user never saw.
        #expect(p.take(update(.online, outage: outage(1, over: true), held: false, transition: false), now: 0) == [])
    }

    @Test func aHoldClosesTheToastOnScreenAndItComesBackAfter() {
        var p = ToastPolicy()
        #expect(p.take(update(.offline, outage: outage(1), held: false), now: 0).count == 1)
        #expect(p.take(update(.offline, outage: outage(1), held: true, transition: false), now: 0) == [.close])
        let back = p.take(update(.offline, outage: outage(1), held: false, transition: false), now: 0)
        guard back.count == 1, case .show = back[0] else {
            Issue.record("expected the toast to show again, got \(back)")
            return
        }
    }

    @Test func aCheckAnsweredWhileHeldShowsNothing() {
        var p = ToastPolicy()
        #expect(p.checkFinished(current: update(.offline, outage: outage(1), held: true), now: 0) == [])
    }
}
