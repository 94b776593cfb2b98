import LifelineCore
@testable import NotifySink
import Testing

/// One toast per outage (SPEC §3), as the policy decides it.
@Suite struct ToastPolicyTests {
    var sequence: UInt64 = 0

    func update(_ state: ConnectivityState, outage: Outage?, reason: String = "", iface: String = "wlan0",
                transition: Bool = true, muted: Int64 = 0) -> Update {
        Update(event: StateEvent(state: state, previous: .online, since: 1_000_000, interface: state == .offline ? "" : iface,
                                 reason: reason, sequence: 1),
               isTransition: transition, outage: outage, mutedUntil: muted)
    }

    func outage(_ id: UInt64, _ worst: ConnectivityState = .offline, over: Bool = false) -> Outage {
        Outage(id: id, since: 0, worst: worst, endedAt: over ? 133_000_000 : nil)
    }

    @Test func oneToastCreatedUpdatedInPlaceAndClosed() {
        var p = ToastPolicy()
        #expect(p.take(update(.online, outage: nil), now: 0) == [])
        let shown = p.take(update(.offline, outage: outage(1), reason: "default route via wlan0 removed"), now: 0)
        guard case .show(let toast)? = shown.first, shown.count == 1 else {
            Issue.record("expected one show, got \(shown)")
            return
        }
        #expect(toast.summary == "Offline")
        #expect(toast.body == "Default route via wlan0 removed.")
        #expect(toast.icon == "network-offline")
        #expect(toast.urgency == .critical)
        #expect(toast.hasActions)

        let portal = p.take(update(.portal, outage: outage(1), reason: "redirected to http://login.hotel/"), now: 0)
        guard case .update(let t)? = portal.first, portal.count == 1 else {
            Issue.record("expected one update, got \(portal)")
            return
        }
        #expect(t.summary == "Sign in to the network")
        #expect(t.body.contains("http://login.hotel/"))
        #expect(t.urgency == .normal)

        // An attribute-only update of the same state: nothing to redraw.
        #expect(p.take(update(.portal, outage: outage(1), reason: "redirected to http://login.hotel/", transition: false), now: 0) == [])

        let back = p.take(update(.online, outage: outage(1, over: true)), now: 0)
        #expect(back.count == 2)
        #expect(back.first == .close)
        guard case .backOnline(let b)? = back.last else {
            Issue.record("no back-online toast")
            return
        }
        #expect(b.body == "Back online via wlan0 — offline for 2m 13s.")
        #expect(!b.hasActions)
        // Later attribute updates while online say nothing more.
        #expect(p.take(update(.online, outage: outage(1, over: true), transition: false), now: 0) == [])
    }

    @Test func backOnlineCanBeTurnedOff() {
        var p = ToastPolicy(backOnlineMessage: false)
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        #expect(p.take(update(.online, outage: outage(1, over: true)), now: 0) == [.close])
    }

    @Test func aDismissedToastDoesNotComeBackInTheSameOutage() {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        p.closedByServer()
        #expect(p.take(update(.limited, outage: outage(1)), now: 0) == [])
        // The next outage alerts again.
        #expect(p.take(update(.offline, outage: outage(2)), now: 0).count == 1)
    }

    @Test func mutedOutagesStaySilentAndMutingClosesTheToast() {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        #expect(p.take(update(.offline, outage: outage(1), transition: false, muted: 100), now: 50) == [.close])
        #expect(p.take(update(.offline, outage: outage(2), muted: 100), now: 50) == [])
        #expect(p.take(update(.online, outage: outage(2, over: true), muted: 100), now: 50) == [])
    }

    @Test func aRestartedServerShowsTheOngoingOutageOnce() {
        var p = ToastPolicy()
        let current = update(.offline, outage: outage(1))
        _ = p.take(current, now: 0)
        #expect(p.serverRestarted(current: current, now: 0).count == 1)
        #expect(p.isShowing)
        // No outage on: nothing to show again.
        var q = ToastPolicy()
        #expect(q.serverRestarted(current: update(.online, outage: nil), now: 0) == [])
    }
}
