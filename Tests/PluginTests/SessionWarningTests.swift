import LifelineCore
import Testing

@testable import NotifySink

/// The one toast before a network's session ends, as its captive-portal API counts it.
@Suite struct SessionWarningTests {
    static let minute: Int64 = 60_000_000

    static func event(_ state: ConnectivityState = .online, seconds: Int64? = nil, bytes: Int64? = nil,
                      captive: Bool = false, extend: Bool? = nil) -> StateEvent {
        var e = StateEvent(state: state, previous: .unknown, since: 0, interface: "wlan0", kind: .wifi, sequence: 1)
        var p = CaptivePortal(api: "https://p.example/api", source: .ra)
        p.captive = captive
        p.secondsRemaining = seconds
        p.bytesRemaining = bytes
        p.canExtendSession = extend
        p.userPortalURL = "https://p.example/login"
        e.captivePortal = p
        return e
    }

    @Test func oneToastWhenTheSessionIsDownToTheThresholdWithExtend() {
        var w = SessionWarning(time: .seconds(600), bytes: 0)
        let e = Self.event(seconds: 3600, extend: true)
        #expect(w.take(e, now: 0) == nil, "an hour left")
        #expect(w.dueAt == 50 * Self.minute)
        // The same answer again (an update for another attribute) does not restart the count.
        #expect(w.take(e, now: 49 * Self.minute) == nil)
        let toast = w.due(e, now: 50 * Self.minute)
        #expect(toast?.summary == "Wi-Fi session ends in 10 min")
        #expect(toast?.buttons.map(\.key) == ["extend"])
        #expect(w.due(e, now: 51 * Self.minute) == nil, "once per session")
        #expect(w.dueAt == nil)
    }

    @Test func bytesLeftWarnTooAndNoExtendWithoutTheAPIsWord() {
        var w = SessionWarning(time: .seconds(600), bytes: 10_000_000)
        #expect(w.take(Self.event(bytes: 50_000_000), now: 0) == nil)
        let toast = w.take(Self.event(bytes: 4_000_000), now: Self.minute)
        #expect(toast?.summary == "Wi-Fi session ends with 4 MB left")
        #expect(toast?.buttons.isEmpty == true)
    }

    @Test func noToastBehindThePortalOrDuringAnOutageAndANewSessionWarnsAgain() {
        var w = SessionWarning(time: .seconds(600), bytes: 0)
        #expect(w.take(Self.event(seconds: 300, captive: true), now: 0) == nil, "captive: no session yet")
        #expect(w.take(Self.event(.limited, seconds: 300), now: 0) == nil, "the outage toast holds the screen")
        #expect(w.take(Self.event(seconds: 300), now: 0) != nil, "online again: 5 min left")
        #expect(w.take(Self.event(seconds: 0, captive: true), now: 10 * Self.minute) == nil)
        #expect(w.take(Self.event(seconds: 200), now: 11 * Self.minute) != nil, "signed in again: a new session")
    }
}
