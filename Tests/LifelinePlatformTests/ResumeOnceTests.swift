import LifelineCore
import LifelinePlatform
import Testing

/// Waiting for the first of several racers: the first value is the answer,
/// and a later racer resuming again neither crashes nor changes it.
@Suite struct ResumeOnceTests {
    @Test func theFirstRacerAnswersAndTheLaterOneIsIgnored() async {
        let once = ResumeOnce<Int>()
        let answer = await withCheckedContinuation { (c: CheckedContinuation<Int, Never>) in
            once.set(c)
            once.resume(1)
            once.resume(2)
        }
        #expect(answer == 1)
    }
}
