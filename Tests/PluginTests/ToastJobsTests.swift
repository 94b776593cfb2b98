import LifelineCore
import Testing
@testable import NotifySink

/// The outage toast counts `lifeline run`'s waiting commands, in place.
@Suite struct ToastJobsTests {
    func update(jobs: [Job]) -> Update {
        var u = Update(event: StateEvent(state: .offline, previous: .online, since: 1, reason: "cable out", sequence: 1),
                       isTransition: false, outage: Outage(id: 1, since: 0, worst: .offline))
        u.jobs = jobs
        return u
    }

    func job(_ id: String, _ state: JobState) -> Job { Job(id: id, commandLine: "git push", state: state, owner: ":1.\(id)") }

    @Test func theToastCountsWaitingCommandsAndOffersRetryAndCancelInPlace() throws {
        var p = ToastPolicy()
        let first = p.take(update(jobs: []), now: 0)
        guard first.count == 1, case .show(let plain) = first[0] else { Issue.record("\(first)"); return }
        #expect(plain.body == "Cable out.")
        #expect(!plain.hasJobActions)

        let one = p.take(update(jobs: [job("1", .waiting)]), now: 0)
        guard one.count == 1, case .update(let t1) = one[0] else { Issue.record("expected an update in place, got \(one)"); return }
        #expect(t1.body == "Cable out. 1 command waiting for the network.")
        #expect(t1.hasJobActions)

        let two = p.take(update(jobs: [job("1", .waiting), job("2", .retrying), job("3", .running)]), now: 0)
        guard two.count == 1, case .update(let t2) = two[0] else { Issue.record("\(two)"); return }
        #expect(t2.body == "Cable out. 2 commands waiting for the network.")

        let none = p.take(update(jobs: [job("3", .running)]), now: 0)
        guard none.count == 1, case .update(let t0) = none[0] else { Issue.record("\(none)"); return }
        #expect(t0 == plain)
    }
}
