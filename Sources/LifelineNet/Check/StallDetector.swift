import LifelineCore
import LifelinePlatform

package struct PacketCounters: Sendable, Equatable {
    package var tx: UInt64
    package var rx: UInt64
}

/// Watches one interface's packet counters, sampled about once a second, for
/// the two signals a probe cannot see between its runs:
///
/// - stall: packets keep leaving (tx grew in two samples or more) but nothing
///   that looks like answers arrives for `window`: whatever the user is doing gets
///   no reply. Fires once, and again only after answers arrived in between.
/// - resumed: after a stall, answers arrive again: the upstream may be back.
///
/// "Answers": at least one packet in for every `answerRatio` out in the same
/// sample. Any link hears some unsolicited packets (ARP, IPv6 neighbour and
/// multicast chatter, a neighbour's broadcasts); one of those amid a stream of
/// unanswered packets is not an answer.
///
/// Packets the probe itself causes would fool both signals (its reply is
/// "arriving", its SYNs "leaving"), so in samples where a probe starts or ends
/// the first `probeAllowance` packets out are taken to be the probe's, and as
/// many in when a probe that ended got its reply. More than that is the user's
/// traffic, and still counts. A probe that got no reply (blackholed, refused)
/// brought nothing in: what arrives then is the user's answers, and hiding
/// them would hold back the news that the upstream is back. Samples in the
/// middle of a long probe are not discounted at all: a blackholed probe can
/// take its whole timeout, and answers arriving meanwhile mean the upstream
/// is back.
package struct StallDetector: Sendable {
    package enum Signal: Equatable, Sendable {
        case stall(since: Moment)
        case resumed
    }

    package var window: Duration
    package var answerRatio: UInt64 = 8
    /// An HTTP check is about a dozen packets each way (handshake, request, reply, close).
    package var probeAllowance: UInt64 = 16
    /// Packets that straggle in after a probe ended (the server's FIN) still count as the probe's.
    package var probeGrace: Duration = .milliseconds(500)

    /// Packets of the user's out in one sample that are still only the link's
    /// own chatter, not traffic worth watching closely: the router's or the
    /// peer's neighbour probe answered (ARP, IPv6 neighbour discovery; each
    /// probe's reply makes the server side check its entry for us about 5 s
    /// later), a router solicitation, a multicast report.
    package var linkChatter: UInt64 = 2

    /// The shortest time between samples: a stall is dated no earlier than
    /// this before the sample that first saw unanswered packets, however long
    /// the watcher slept before it.
    package var samplePeriod: Duration = .seconds(1)

    private var interface: String?
    private var last: PacketCounters?
    private var lastSample: Moment?
    /// The user's packets out in the last sample (the probe's own taken off).
    package private(set) var userSent: UInt64 = 0
    /// Whether the last sample saw traffic worth sampling once a second for:
    /// more of the user's packets out than the link's chatter, or any at all
    /// while a stall stands (their answers mean the upstream is back).
    package var sawTraffic: Bool { userSent > linkChatter || (stalled && userSent > 0) }
    /// First unanswered outgoing sample since packets last arrived.
    private var firstUnansweredTx: Moment?
    private var unansweredTxSamples = 0
    package private(set) var stalled = false

    package init(window: Duration) {
        self.window = window
    }

    /// Feeds one sample. `probeBusy` is whether a probe started since the
    /// previous sample or ended less than `probeGrace` before it: the samples
    /// that carry its packets. `probeReplied` is whether that probe's reply
    /// may be among the packets in: false when it ended without one.
    package mutating func sample(interface: String, counters: PacketCounters, at now: Moment, probeBusy: Bool,
                         probeReplied: Bool = true) -> Signal? {
        defer {
            last = counters
            lastSample = now
        }
        userSent = 0
        guard interface == self.interface, let last, counters.tx >= last.tx, counters.rx >= last.rx else {
            // New interface or counters reset (interface re-created): start over.
            self.interface = interface
            reset()
            return nil
        }
        var sent = counters.tx - last.tx
        var received = counters.rx - last.rx
        if probeBusy {
            sent = sent > probeAllowance ? sent - probeAllowance : 0
            if probeReplied { received = received > probeAllowance ? received - probeAllowance : 0 }
        }
        userSent = sent
        // Rounded up: one packet in amid 10 out (half a second of a 20/s
        // stream) is 1 for 10, not one for every 8.
        if received > 0, received >= (sent + answerRatio - 1) / answerRatio {
            let wasStalled = stalled
            reset()
            return wasStalled ? .resumed : nil
        }
        if sent > 0 {
            if firstUnansweredTx == nil, let lastSample {
                // After a long sleep the packets may have left just now: the
                // window counts from one sample period back at most.
                firstUnansweredTx = max(lastSample, now.advanced(by: .zero - samplePeriod))
            }
            unansweredTxSamples += 1
        }
        if !stalled, let since = firstUnansweredTx, unansweredTxSamples >= 2, since.duration(to: now) >= window {
            stalled = true
            return .stall(since: since)
        }
        return nil
    }

    private mutating func reset() {
        firstUnansweredTx = nil
        unansweredTxSamples = 0
        stalled = false
    }
}

/// How long the counter watcher sleeps between samples. Reading the counters
/// costs a wake-up, so it looks once a second only while the user's traffic
/// flows (a stall can only build up then), and backs off 1, 2, 4 … up to the
/// probe's interval while it does not: an idle machine is woken about once per
/// interval, and so is one whose user gave up during an outage. The link's
/// own chatter (`StallDetector.linkChatter`) is not traffic: an answered
/// neighbour probe after every probe round restarted the back-off each time,
/// so an idle machine was read at 1, 3, 7, 15 s after every round. While a
/// stall stands and packets still leave it looks twice a second, so that
/// answers coming back (the upstream healed) are seen within half a second.
package struct CounterPace: Sendable, Equatable {
    package var shortest: Duration = .seconds(1)
    package var longest: Duration
    package var whileStalled: Duration = .milliseconds(500)
    package private(set) var delay: Duration

    package init(longest: Duration) {
        self.longest = max(longest, shortest)
        delay = shortest
    }

    /// The delay before the next sample, after one that saw the user's
    /// traffic or not (`stalled`: a stall stands).
    package mutating func next(traffic: Bool, stalled: Bool) -> Duration {
        guard traffic else {
            delay = min(delay * 2, longest)
            return delay
        }
        delay = shortest
        return stalled ? whileStalled : shortest
    }
}
