import LifelineCore
import Logging
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// How long a probe waits for its connection once the check server's usual
/// connect time is known, and how soon a failure after an answer is confirmed.
@Suite struct ConnectBoundTests {
    @Test func nothingLearnedOnThePathMeansTheWholeTimeout() {
        var bound = ConnectBound()
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .seconds(5))
        bound.record(.milliseconds(2), family: "ipv4", path: 1)
        #expect(bound.bound(family: "ipv6", path: 1, timeout: .seconds(5)) == .seconds(5), "another family")
        #expect(bound.bound(family: "ipv4", path: 2, timeout: .seconds(5)) == .seconds(5), "another path")
    }

    @Test func aQuickServerGetsTheSynRetryAndAQuarterSecond() {
        var bound = ConnectBound()
        bound.record(.microseconds(300), family: "ipv4", path: 1)
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .milliseconds(1250))
    }

    @Test func aSlowServerGetsThreeTimesItsSlowestRecentConnect() {
        var bound = ConnectBound()
        for ms in [40, 200, 90, 60] { bound.record(.milliseconds(ms), family: "ipv4", path: 1) }
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .milliseconds(1600))
        // Four more quick ones push the slow one out.
        for _ in 0..<4 { bound.record(.milliseconds(20), family: "ipv4", path: 1) }
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .milliseconds(1250))
        // Never more than the timeout.
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(1)) == .seconds(1))
    }

    @Test func aConnectThatNeededTheSynRetryIsNotTheUsualTime() {
        var bound = ConnectBound()
        bound.record(.milliseconds(5), family: "ipv4", path: 1)
        // The first answer after an outage: its SYN went out into the blackhole
        // and its retransmission found the path healed, 1 or 3 s later.
        bound.record(.milliseconds(1003), family: "ipv4", path: 1)
        bound.record(.milliseconds(3004), family: "ipv4", path: 1)
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .milliseconds(1250))
    }

    @Test func aNewPathForgetsWhatWasLearned() {
        var bound = ConnectBound()
        bound.record(.milliseconds(1), family: "ipv4", path: 1)
        bound.record(.milliseconds(1), family: "ipv4", path: 2)
        #expect(bound.bound(family: "ipv4", path: 1, timeout: .seconds(5)) == .seconds(5))
        #expect(bound.bound(family: "ipv4", path: 2, timeout: .seconds(5)) == .milliseconds(1250))
    }
}

@Suite struct ConfirmAtOnceTests {
    func at(_ seconds: Double) -> Moment { Moment(offset: .milliseconds(Int64(seconds * 1000))) }

    @Test func theFirstFailureAfterAnAnswerIsConfirmedAtOnceThenTheRampStarts() {
        var plan = ProbePlan(interval: .seconds(30))
        #expect(plan.start(at: at(0)) == .schedule)
        plan.finish(at: at(0.01), online: true)
        #expect(plan.start(at: at(30.01)) == .schedule)
        plan.finish(at: at(31.26), online: false)
        #expect(plan.start(at: at(31.26)) == .schedule, "the confirmation starts as the failure ends")
        plan.finish(at: at(32.51), online: false)
        #expect(plan.start(at: at(33.5)) == nil)
        #expect(plan.start(at: at(33.51)) == .schedule, "then 1 s")
        plan.finish(at: at(38.51), online: false)
        #expect(plan.start(at: at(40.5)) == nil)
        #expect(plan.start(at: at(40.51)) == .schedule, "then 2 s")
    }

    @Test func aStallsFailureIsFollowedByTheRampNotAnotherProbeAtOnce() {
        var plan = ProbePlan(interval: .seconds(30))
        _ = plan.start(at: at(0))
        plan.finish(at: at(0), online: true)
        _ = plan.trigger(.stall("eth0 sent packets but received none for 3s"))
        #expect(plan.start(at: at(10)) == .stall("eth0 sent packets but received none for 3s"))
        plan.finish(at: at(11.5), online: false)
        #expect(plan.start(at: at(12.4)) == nil)
        #expect(plan.start(at: at(12.5)) == .schedule)
    }

    @Test func aFailureWithNoAnswerBeforeKeepsTheRamp() {
        var plan = ProbePlan(interval: .seconds(30))
        _ = plan.start(at: at(0))
        plan.finish(at: at(5), online: false)
        #expect(plan.start(at: at(5.5)) == nil)
        #expect(plan.start(at: at(6)) == .schedule)
    }
}

/// What the monitor asks libcurl for once the check server has answered, with
/// libcurl replaced by a script of replies.
@Suite struct BoundedConnectProbeTests {
    final class Script: Sendable {
        let requests = Mutex<[HTTPRequest]>([])
        let replies: Mutex<[Result<HTTPReply, HTTPFailure>]>
        init(_ replies: [Result<HTTPReply, HTTPFailure>]) { self.replies = Mutex(replies) }
    }

    static let answer = HTTPReply(status: 200, headers: [], body: Array("NetworkManager is online\n".utf8), truncated: false,
                                  redirect: nil, rttMs: 1.2, connectMs: 0.4)
    static let lost = HTTPFailure(url: "http://10.0.0.1/check", code: 28, kind: .timeout,
                                message: "Connection timed out after 1250 milliseconds", stage: .connecting)

    func monitor(_ script: Script) -> ProbeMonitor {
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(),
                                    control: Bus(clock: ContinuousClock()))
        var config = ProbeMonitor.Config()
        config.url = "http://10.0.0.1/check"
        config.family = .ipv4
        return ProbeMonitor(config: config, context: context, clock: ContinuousClock(), files: HostFiles(sys: "/nonexistent"),
                            fetch: { request in
                                script.requests.withLock { $0.append(request) }
                                return script.replies.withLock { $0.isEmpty ? .failure(Self.lost) : $0.removeFirst() }
                            })
    }

    @Test func afterAnAnswerAConnectIsBoundedAndItsFailureNamesTheBound() async {
        let script = Script([.success(Self.answer)])
        let monitor = monitor(script)
        let bus = Bus(clock: ContinuousClock())
        let handle = bus.makeMonitorHandle(name: "probe")
        let judge = SharedJudge(ProbeJudge(failures: 2))
        #expect(await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle) == true)
        #expect(await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle) == false)
        #expect(judge.state.withLock { $0.lastPublished?.state } == .online, "one failure is not yet an outage")
        #expect(await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle) == false)
        let sent = script.requests.withLock { $0 }
        #expect(sent.map(\.timeout) == [.seconds(5), .seconds(5), .seconds(5)], "an answer still gets the whole timeout")
        #expect(sent.map(\.connectTimeout) == [.seconds(5), .milliseconds(1250), .milliseconds(1250)])
        #expect(judge.state.withLock { $0.lastPublished?.state } == .limited)
        #expect(judge.state.withLock { $0.lastPublished?.reason } == "TCP connect to 10.0.0.1:80 timed out after 1250ms")
        // The outage is known: the next probe waits the whole timeout again.
        _ = await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle)
        #expect(script.requests.withLock { $0.last?.connectTimeout } == .seconds(5))
    }

    @Test func aStallsProbeKeepsItsOwnShortWait() async {
        let script = Script([.success(Self.answer)])
        let monitor = monitor(script)
        let handle = Bus(clock: ContinuousClock()).makeMonitorHandle(name: "probe")
        let judge = SharedJudge(ProbeJudge(failures: 2))
        _ = await monitor.probeOnce(cause: .schedule, judge: judge, handle: handle)
        _ = await monitor.probeOnce(cause: .stall("eth0 sent packets but received none for 3s"), judge: judge, handle: handle)
        let last = script.requests.withLock { $0.last }
        #expect(last?.timeout == .milliseconds(1500))
        #expect(last?.connectTimeout == .milliseconds(1500))
    }
}
