import LifelineCore
import Testing
@testable import NotifySink

/// One toast per outage, as the policy decides it.
@Suite struct ToastPolicyTests {
    func update(_ state: ConnectivityState, outage: Outage?, reason: String = "", iface: String = "wlan0",
                transition: Bool = true, muted: Int64 = 0) -> Update {
        Update(event: StateEvent(state: state, previous: .online, since: 1_000_000, interface: state == .offline ? "" : iface,
                                 reason: reason, sequence: 1),
               isTransition: transition, outage: outage, mutedUntil: muted)
    }

    func outage(_ id: UInt64, _ worst: ConnectivityState = .offline, over: Bool = false) -> Outage {
        Outage(id: id, since: 0, worst: worst, endedAt: over ? 133_000_000 : nil)
    }

    func shown(_ actions: [ToastPolicy.Action]) -> Toast? {
        guard actions.count == 1, case .show(let t) = actions[0] else { return nil }
        return t
    }

    func updated(_ actions: [ToastPolicy.Action]) -> Toast? {
        guard actions.count == 1, case .update(let t) = actions[0] else { return nil }
        return t
    }

    @Test func oneToastUpdatedInPlaceThenTurnedIntoBackOnline() throws {
        var p = ToastPolicy()
        #expect(p.take(update(.online, outage: nil), now: 0) == [])
        let toast = try #require(shown(p.take(update(.offline, outage: outage(1), reason: "default route via wlan0 removed"), now: 0)))
        #expect(toast.summary == "Offline")
        #expect(toast.body == "Default route via wlan0 removed.")
        #expect(toast.icon == "network-offline")
        #expect(toast.urgency == .critical)
        #expect(toast.hasActions)
        #expect(toast.timeout == 0)

        let portal = try #require(updated(p.take(update(.portal, outage: outage(1), reason: "redirected to http://login.hotel/"), now: 0)))
        #expect(portal.summary == "Sign in to the network")
        // The portal named by its host: no address a server could make a link of.
        #expect(portal.body.hasSuffix("Redirected to login.hotel."), "\(portal.body)")
        #expect(!portal.body.contains("http"))
        #expect(portal.urgency == .normal)

        // An attribute-only update of the same state: nothing to redraw.
        #expect(p.take(update(.portal, outage: outage(1), reason: "redirected to http://login.hotel/", transition: false), now: 0) == [])

        // Recovery replaces the outage toast in place: no close first.
        let back = p.take(update(.online, outage: outage(1, over: true)), now: 0)
        guard back.count == 1, case .backOnline(let b) = back[0] else {
            Issue.record("expected one back-online action, got \(back)")
            return
        }
        #expect(b.summary == "Back online")
        #expect(b.body == "Back online via wlan0 — offline for 2m 13s.")
        #expect(!b.hasActions)
        #expect(b.timeout > 0 && b.timeout <= 10_000, "a short expiry")
        // Later attribute updates while online say nothing more.
        #expect(p.take(update(.online, outage: outage(1, over: true), transition: false), now: 0) == [])
        #expect(!p.isShowing)
    }

    @Test func backOnlineCanBeTurnedOff() {
        var p = ToastPolicy(backOnlineMessage: false)
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        #expect(p.take(update(.online, outage: outage(1, over: true)), now: 0) == [.close])
    }

    @Test func theUsersDismissalSilencesTheStateButNotAChangeOfState() throws {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        p.closedByServer(.dismissedByUser)
        #expect(p.take(update(.offline, outage: outage(1), reason: "still down", transition: false), now: 0) == [])
        // offline → portal is news: the user now has to sign in.
        let portal = try #require(shown(p.take(update(.portal, outage: outage(1)), now: 0)))
        #expect(portal.summary == "Sign in to the network")
        // The dismissed outage still gets its "Back online": the user saw it.
        #expect(p.take(update(.online, outage: outage(1, over: true)), now: 0).count == 1)
        // The next outage alerts again.
        #expect(shown(p.take(update(.offline, outage: outage(2)), now: 0)) != nil)
    }

    @Test func anExpiredToastIsNoDismissal() {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        p.closedByServer(.expired)
        #expect(shown(p.take(update(.limited, outage: outage(1)), now: 0)) != nil)
    }

    @Test func aCloseThatCameWithAnActionIsNoDismissalAndTheCheckIsAnswered() throws {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1), reason: "cable pulled"), now: 0)
        p.actionWasInvoked()
        // Servers close a toast whose action was invoked, some with the reason "dismissed".
        p.closedByServer(.dismissedByUser)
        let answer = try #require(shown(p.checkFinished(current: update(.offline, outage: outage(1), reason: "cable pulled"), now: 0)))
        #expect(answer.summary == "Offline")
        #expect(answer.body == "Checked just now: still offline. Cable pulled.")
        // The same state again does not take the answer away.
        #expect(p.take(update(.offline, outage: outage(1), reason: "cable pulled", transition: false), now: 0) == [])
        // A new state drops it.
        let limited = try #require(updated(p.take(update(.limited, outage: outage(1)), now: 0)))
        #expect(!limited.body.contains("Checked"))
    }

    @Test func aToastTheServerKeptIsUpdatedInPlaceWithTheAnswer() throws {
        var p = ToastPolicy()
        _ = p.take(update(.portal, outage: outage(1)), now: 0)
        p.actionWasInvoked()
        let answer = try #require(updated(p.checkFinished(current: update(.portal, outage: outage(1)), now: 0)))
        #expect(answer.body.hasPrefix("Checked just now: still waiting for you to sign in."))
    }

    @Test func aCheckThatEndedTheOutageLeavesItToRecovery() {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        p.actionWasInvoked()
        #expect(p.checkFinished(current: update(.online, outage: outage(1, over: true)), now: 0) == [])
    }

    @Test func mutingClosesTheToastAndMutedOutagesStaySilent() {
        var p = ToastPolicy()
        _ = p.take(update(.offline, outage: outage(1)), now: 0)
        #expect(p.take(update(.offline, outage: outage(1), transition: false, muted: 100), now: 50) == [.close])
        #expect(p.take(update(.offline, outage: outage(2), muted: 100), now: 50) == [])
        #expect(p.take(update(.online, outage: outage(2, over: true), muted: 100), now: 50) == [])
    }

    @Test func noBackOnlineForAnOutageTheUserNeverSaw() {
        var p = ToastPolicy()
        #expect(p.take(update(.offline, outage: outage(1), muted: 100), now: 50) == [])
        #expect(p.take(update(.online, outage: outage(1, over: true), muted: 100), now: 60) == [])
        // The mute ends after the outage (Mute(0) posts an update; or it expires).
        #expect(p.take(update(.online, outage: outage(1, over: true), transition: false, muted: 70), now: 70) == [])
        #expect(p.take(update(.online, outage: outage(1, over: true), transition: false), now: 200) == [])
    }

    @Test func whenTheMuteEndsDuringAnOutageItsToastAppears() throws {
        var p = ToastPolicy()
        #expect(p.take(update(.offline, outage: outage(1), muted: 100), now: 50) == [])
        // The mute ran out: the same update, looked at again later.
        let toast = try #require(shown(p.take(update(.offline, outage: outage(1), muted: 100), now: 100)))
        #expect(toast.summary == "Offline")
        #expect(p.take(update(.offline, outage: outage(1), muted: 100), now: 150) == [])
    }

    @Test func withoutAServerNothingCountsAsSeen() throws {
        var p = ToastPolicy()
        p.serverVanished()
        #expect(p.take(update(.offline, outage: outage(1)), now: 0) == [])
        #expect(p.take(update(.online, outage: outage(1, over: true)), now: 0) == [])
        // A server appearing during the next outage shows it, once.
        let current = update(.limited, outage: outage(2))
        #expect(p.take(current, now: 0) == [])
        #expect(shown(p.serverAppeared(current: current, now: 0)) != nil)
        #expect(p.serverAppeared(current: current, now: 0) == [])
        #expect(p.take(current, now: 0) == [])
    }

    @Test func aRestartedServerShowsTheOngoingOutageOnce() {
        var p = ToastPolicy()
        let current = update(.offline, outage: outage(1))
        _ = p.take(current, now: 0)
        // The bus watch's first word while the toast is up changes nothing.
        #expect(p.serverAppeared(current: current, now: 0) == [])
        p.serverVanished()
        #expect(p.serverAppeared(current: current, now: 0).count == 1)
        #expect(p.isShowing)
        // No outage on: nothing to show again.
        var q = ToastPolicy()
        q.serverVanished()
        #expect(q.serverAppeared(current: update(.online, outage: nil), now: 0) == [])
    }
}

/// What reaches the notification server from text the network controls.
@Suite struct ToastTextTests {
    @Test(arguments: [
        ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"),
        ("<span color=red>", "&lt;span color=red&gt;"),
        (#"<a href="https://phish/">Sign in</a>"#, "&lt;a href=&quot;https://phish/&quot;&gt;Sign in&lt;/a&gt;"),
        ("a&b", "a&amp;b"),
        ("it's", "it&apos;s"),
        ("\u{1b}]0;title\u{07}", "]0;title"),
        ("a\u{202E}b\u{0}c\u{9b}d", "abcd"),
        ("line\nbreak", "line\nbreak"),
    ])
    func markupIsEscapedAndControlsDropped(_ input: String, _ expected: String) {
        #expect(ToastText.body(input, markup: true) == expected)
    }

    @Test func withoutMarkupTheTextIsSentAsItIs() {
        #expect(ToastText.body("a&b <i>", markup: false) == "a&b <i>")
        #expect(ToastText.body("\u{1b}[31mred", markup: false) == "[31mred")
    }

    @Test func longTextIsBounded() {
        let huge = String(repeating: "&", count: 1 << 20)
        let body = ToastText.body(huge, markup: true)
        #expect(body == String(repeating: "&amp;", count: ToastText.bodyLimit) + "…")
        #expect(ToastText.summary(String(repeating: "x", count: 1000), markup: false).count == ToastText.summaryLimit + 1)
    }
}

/// Addresses in a toast's reason are shown as their host alone: GNOME Shell
/// (and Plasma) turn a `scheme://…`, `www.…` or `name.tld/…` in a body into
/// a link, and a portal's `Location` is the network's to choose.
@Suite struct ToastAddressesTests {
    @Test(arguments: [
        ("probe to http://a.example/check was redirected to http://portal.example/login?x=1 (HTTP 302)",
         "probe to a.example was redirected to portal.example (HTTP 302)"),
        ("redirected to https://user:pw@www.evil.example:8443/a/b#c.", "redirected to evil.example."),
        ("redirected to http://www2.evil.example/", "redirected to evil.example"),
        ("redirected to http://[fe80::1]:8080/x", "redirected to fe80::1"),
        ("(see http://portal.example)", "(see portal.example)"),
        ("no address here", "no address here"),
        ("redirected to http:///nothing", "redirected to ?"),
        (#"<a href="https://phish.example/x">Sign in</a>"#, #"<a href="phish.example">Sign in</a>"#),
        ("(http://a.example/x)(http://b.example)", "(a.example)(b.example)"),
        // A page's own words, quoted in the reason: no scheme, still a link on GNOME Shell.
        ("expected 'NetworkManager is online', got 'Pay at www.evil.example/pay now'",
         "expected 'NetworkManager is online', got 'Pay at evil.example now'"),
        ("got 'see evil.example/login?x=1, then'", "got 'see evil.example, then'"),
        ("got 'www3.evil.example'", "got 'evil.example'"),
        // Not links: an address with a prefix length, a file, a plain name.
        ("route to 10.0.0.0/24 via eth0", "route to 10.0.0.0/24 via eth0"),
        ("read /etc/resolv.conf", "read /etc/resolv.conf"),
        ("DNS could not resolve nmcheck.gnome.org", "DNS could not resolve nmcheck.gnome.org"),
    ])
    func addressesBecomeHosts(reason: String, shown: String) {
        #expect(ToastAddresses.hostsOnly(reason) == shown)
    }

    @Test func aPortalsAddressIsNoLinkInAnyToast() throws {
        let event = StateEvent(state: .portal, previous: .online, since: 0, interface: "wlan0",
                               reason: "probe to http://nmcheck.gnome.org/check_network_status.txt was redirected to http://www.hotel-login.example/portal.php?mac=00:11 (HTTP 302)", sequence: 1)
        let toast = ToastPolicy.toast(for: event)
        #expect(!toast.body.contains("://") && !toast.body.contains("www.") && !toast.body.contains("/"), "\(toast.body)")
        #expect(toast.body.contains("hotel-login.example"))
    }
}
