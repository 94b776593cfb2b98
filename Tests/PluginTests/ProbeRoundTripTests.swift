import LifelineCore
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// A probe round whose answer came a few ms sooner or later than the one
/// published says nothing new: the monitor repeats the published observation
/// (the bus then publishes nothing), and reports the round trip again only
/// when it changed in a way a user would notice.
@Suite struct ProbeRoundTripTests {
    func pong(_ judge: inout ProbeJudge, _ rtt: Double, path: UInt64 = 1) -> Observation {
        judge.record(.pong(rttMs: rtt), interface: "wlan0", path: path, afterStall: nil)
    }

    @Test func aRoundTripThatBarelyMovedRepeatsThePublishedObservation() {
        var judge = ProbeJudge(failures: 2)
        let first = pong(&judge, 38)
        #expect(first.reason == "probe answered in 38 ms" && first.rttMs == 38)
        #expect(pong(&judge, 41.7) == first)
        #expect(pong(&judge, 30) == first)
        #expect(pong(&judge, 56) == first)  // 1.47 times: not yet

        let slow = pong(&judge, 120)
        #expect(slow.reason == "probe answered in 120 ms" && slow.rttMs == 120)
        #expect(pong(&judge, 95) == slow)
        let fast = pong(&judge, 12)
        #expect(fast.reason == "probe answered in 12 ms")
    }

    @Test func smallRoundTripsNeedTwentyMillisecondsToBeNews() {
        var judge = ProbeJudge(failures: 2)
        let first = pong(&judge, 4)
        #expect(pong(&judge, 9) == first)  // more than doubled, but 5 ms
        #expect(pong(&judge, 30).rttMs == 30)
    }

    @Test func anAnswerAfterTroubleOrOnANewPathIsAlwaysReported() {
        var judge = ProbeJudge(failures: 1)
        _ = pong(&judge, 38)
        let limited = judge.record(.failed("timed out", layer: .http), interface: "wlan0", path: 1, afterStall: nil)
        #expect(limited.state == .limited)
        #expect(pong(&judge, 39).reason == "probe answered in 39 ms")
        #expect(pong(&judge, 40, path: 2).reason == "probe answered in 40 ms")
    }

    @Test func newsIsHalfAsFastOrOneAndAHalfTimesAsSlowAndTwentyMilliseconds() {
        #expect(ProbeJudge.roundTripIsNews(60, after: 38))
        #expect(!ProbeJudge.roundTripIsNews(45, after: 38))
        #expect(ProbeJudge.roundTripIsNews(18, after: 38))
        #expect(!ProbeJudge.roundTripIsNews(26, after: 38))
        #expect(!ProbeJudge.roundTripIsNews(9, after: 4))
        #expect(ProbeJudge.roundTripIsNews(300, after: 200))
        #expect(!ProbeJudge.roundTripIsNews(290, after: 200))
    }
}
