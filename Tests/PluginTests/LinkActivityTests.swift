import Clocks
import Foundation
import LifelineCore
import Logging
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

@Suite struct HostFilesTests {
    @Test func readsCountersFromSysfs() throws {
        let root = try FakeHost()
        try root.write("sys/class/net/eth0/statistics/tx_packets", "42\n")
        try root.write("sys/class/net/eth0/statistics/rx_packets", "7\n")
        #expect(root.files.counters(of: "eth0") == PacketCounters(tx: 42, rx: 7))
        #expect(root.files.counters(of: "nope") == nil)
        #expect(root.files.counters(of: "../../x") == nil)
    }
}

/// A throw-away /proc and /sys.
final class FakeHost {
    let root: URL
    var files: HostFiles { HostFiles(sys: root.path + "/sys") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-host-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func write(_ path: String, _ text: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}

@Suite struct StallDetectorTests {
    func at(_ s: Int) -> Moment { Moment(offset: .seconds(s)) }

    /// Feeds one sample a second: (tx, rx, probe busy).
    func run(_ samples: [(UInt64, UInt64, Bool)], window: Duration = .seconds(3)) -> [(Int, StallDetector.Signal)] {
        var d = StallDetector(window: window)
        var out: [(Int, StallDetector.Signal)] = []
        for (i, s) in samples.enumerated() {
            if let signal = d.sample(interface: "eth0", counters: PacketCounters(tx: s.0, rx: s.1), at: at(i), probeBusy: s.2) {
                out.append((i, signal))
            }
        }
        return out
    }

    @Test func packetsOutNoneInForTheWindowIsAStall() {
        // Healthy until 2, then tx grows each second and rx stays.
        let samples: [(UInt64, UInt64, Bool)] = [(0, 0, false), (10, 10, false), (20, 20, false),
                                                 (30, 20, false), (40, 20, false), (50, 20, false), (60, 20, false), (70, 20, false)]
        let signals = run(samples)
        #expect(signals.count == 1)
        #expect(signals.first?.0 == 5 && signals.first?.1 == .stall(since: at(2)))
    }

    @Test func aLoneNoisePacketAmidAStreamIsNotAnAnswer() {
        // 20 packets/s out; an ARP reply (1 in) at 3 s does not restart the window.
        let samples: [(UInt64, UInt64, Bool)] = [(0, 0, false), (20, 20, false), (40, 20, false),
                                                 (60, 21, false), (80, 21, false), (100, 21, false)]
        #expect(run(samples).map(\.0) == [4])
        // Sparse traffic answered packet for packet is answered.
        #expect(run((0..<10).map { (UInt64($0), UInt64($0), false) }).isEmpty)
    }

    @Test func aLoneNoisePacketInAHalfSecondSampleIsNotAnAnswerEither() {
        // Stalled, so sampled twice a second: 10 packets out per sample, and an
        // ARP reply comes in. It neither ends the stall nor says `resumed`.
        var samples: [(UInt64, UInt64, Bool)] = (0..<6).map { (UInt64($0) * 10, 0, false) }
        samples += [(60, 1, false), (70, 1, false), (80, 11, false)]
        #expect(run(samples).map(\.1) == [.stall(since: at(0)), .resumed])
        #expect(run(samples).last?.0 == 8)
    }

    @Test func idleInterfaceNeverStalls() {
        #expect(run(Array(repeating: (5, 5, false), count: 20)).isEmpty)
    }

    @Test func oneLonelyPacketIsNotAStall() {
        // A single unanswered packet (tx grew once) does not keep leaving.
        #expect(run([(0, 0, false), (1, 0, false)] + Array(repeating: (1, 0, false), count: 10)).isEmpty)
    }

    @Test func packetsArrivingAgainAfterAStallIsResumed() {
        var samples: [(UInt64, UInt64, Bool)] = (0..<6).map { (UInt64($0) * 10, 0, false) }
        samples.append((60, 5, false))
        let signals = run(samples)
        #expect(signals.map(\.1) == [.stall(since: at(0)), .resumed])
    }

    @Test func theProbesOwnPacketsFoolNeitherSignal() {
        // Stalled; then only probe windows see rx: no `resumed`, no second stall.
        var samples: [(UInt64, UInt64, Bool)] = (0..<5).map { (UInt64($0) * 10, 0, false) }
        samples += [(50, 3, true), (60, 3, false), (70, 6, true), (80, 6, false), (90, 6, false), (100, 6, false)]
        #expect(run(samples).map(\.1) == [.stall(since: at(0))])
    }

    @Test func answersBeyondWhatAProbeCausesCountDuringAProbe() {
        // Stalled, then a (blackholed) probe runs for 5 s; the upstream comes back
        // meanwhile and the user's 20 packets/s are answered: resumed at once.
        var samples: [(UInt64, UInt64, Bool)] = (0..<5).map { (UInt64($0) * 20, 0, false) }
        samples += [(102, 0, true), (124, 2, true), (150, 30, true)]
        #expect(run(samples).map(\.1) == [.stall(since: at(0)), .resumed])
        #expect(run(samples).last?.0 == 7)
    }

    @Test func aProbeThatGotNoReplyHidesNoAnswers() {
        // Stalled; a probe into the blackhole ends in the next sample, and the
        // upstream is back: the 5 packets in are the user's answers, not the
        // probe's reply (it got none).
        var d = StallDetector(window: .seconds(3))
        for i in 0..<5 { _ = d.sample(interface: "eth0", counters: PacketCounters(tx: UInt64(i) * 10, rx: 0), at: at(i), probeBusy: false) }
        #expect(d.stalled)
        var replied = d
        #expect(d.sample(interface: "eth0", counters: PacketCounters(tx: 52, rx: 5), at: at(5), probeBusy: true, probeReplied: false) == .resumed)
        // The same packets in after a probe that got its reply may be that reply.
        #expect(replied.sample(interface: "eth0", counters: PacketCounters(tx: 52, rx: 5), at: at(5), probeBusy: true) == nil)
    }

    @Test func newInterfaceOrCounterResetStartsOver() {
        var d = StallDetector(window: .seconds(1))
        _ = d.sample(interface: "eth0", counters: PacketCounters(tx: 100, rx: 100), at: at(0), probeBusy: false)
        _ = d.sample(interface: "eth0", counters: PacketCounters(tx: 110, rx: 100), at: at(1), probeBusy: false)
        #expect(d.sample(interface: "wlan0", counters: PacketCounters(tx: 120, rx: 100), at: at(2), probeBusy: false) == nil)
        #expect(d.sample(interface: "wlan0", counters: PacketCounters(tx: 0, rx: 0), at: at(3), probeBusy: false) == nil)
    }
}

@Suite struct CounterPaceTests {
    @Test func backsOffWhileNothingLeavesAndComesBackWhenPacketsLeave() {
        var pace = CounterPace(longest: .seconds(30))
        #expect(pace.delay == .seconds(1))
        let idle = (0..<7).map { _ in pace.next(traffic: false, stalled: false) }
        #expect(idle == [2, 4, 8, 16, 30, 30, 30].map { .seconds($0) })
        #expect(pace.next(traffic: true, stalled: false) == .seconds(1))
        #expect(pace.next(traffic: true, stalled: true) == .milliseconds(500), "waiting for answers")
        // A stall stands, but the user gave up: nothing to wait for answers to.
        let gaveUp = (0..<3).map { _ in pace.next(traffic: false, stalled: true) }
        #expect(gaveUp == [2, 4, 8].map { .seconds($0) })
    }
}

/// The counter watcher itself, driven by swift-clocks' `TestClock`: when it
/// reads the counters, and what it asks the scheduler for.
@Suite struct CounterWatchTests {
    func settle() async {
        for _ in 0..<20 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Backing off 1, 2, 4, 8 s, then sampled right after each probe (every
    /// 30 s), never on a timer of its own.
    @Test func anIdleInterfaceIsReadLessAndLessOftenThenOnlyAfterEachProbe() async {
        let (times, probes) = await watchWithProbes(for: 100) { _, _ in PacketCounters(tx: 10, rx: 10) }
        #expect(probes.map(\.0) == [0, 30, 60, 90])
        #expect(times == [1, 3, 7, 15, 30, 60, 90])
    }

    @Test func packetsLeavingBringItBackToOnceASecondAndAStallIsSeen() async {
        // Idle for 40 s, then 20 packets/s leave and none come back: the watcher
        // sees them right after the probe at 60, then reads once a second, the
        // stall (3 s counted from one second before 60) at 62, then twice a second.
        let (times, probes) = await watchWithProbes(for: 65) { t, started in
            let flowing = t >= 40 ? UInt64((t - 40) * 20) : 0
            return PacketCounters(tx: 10 + 6 * UInt64(started.count) + flowing, rx: 10 + 7 * UInt64(started.count))
        }
        // At 62.5 the stall's own probe takes the 10 packets of that half second
        // for its own: that sample says nothing of the user's traffic, and the
        // watcher keeps looking twice a second for answers.
        #expect(times == [1, 3, 7, 15, 30, 60, 61, 62, 62.5, 63, 63.5, 64, 64.5, 65])
        #expect(probes.map(\.1).contains(.stall("eth0 sent packets but received none for 3s")), "\(probes)")
    }

    /// What an idle machine's interface carries (measured in the idle
    /// benchmark's lab): each probe round is 6 packets out and 7 in, and 5 s
    /// after it the server side checks its neighbour entry for us (an ARP
    /// request in, our reply out); now and then a router solicitation goes
    /// out alone. None of it is the user's traffic: the watcher backs off to
    /// the probe interval as on a silent link, and no probe but the
    /// interval's is made.
    @Test func probeRoundsAndTheLinksChatterLeaveAnIdleMachineAlone() async {
        let (times, probes) = await watchWithProbes(for: 130) { t, started in
            let rounds = UInt64(started.count)
            let arps = UInt64(started.filter { $0 + 5 <= t }.count)
            let solicitations: UInt64 = (t >= 12 ? 1 : 0) + (t >= 44 ? 1 : 0) + (t >= 100 ? 1 : 0)
            return PacketCounters(tx: 10 + 6 * rounds + arps + solicitations, rx: 10 + 7 * rounds + arps)
        }
        #expect(probes.map(\.0) == [0, 30, 60, 90, 120])
        #expect(probes.allSatisfy { $0.1 == .schedule }, "\(probes)")
        #expect(times == [1, 3, 7, 15, 30, 60, 90, 120])
    }

    /// The user's traffic still brings the watcher back at once (a flood of
    /// pings nobody answers: above), and so does a download that is answered.
    @Test func aDownloadStillBringsItBackToOnceASecond() async {
        let (times, _) = await watchWithProbes(for: 70) { t, started in
            let flowing = t >= 40 ? UInt64((t - 40) * 50) : 0
            return PacketCounters(tx: 10 + 6 * UInt64(started.count) + flowing, rx: 10 + 7 * UInt64(started.count) + 2 * flowing)
        }
        #expect(times == [1, 3, 7, 15, 30, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70])
    }

    /// The quality reading rides the watcher's own wake-ups while traffic
    /// flows, and an idle machine is never read for it.
    @Test func theQualityIsReadOnlyWhileTrafficFlowsAndOnTheWatchersOwnWakeUps() async {
        let qualityReads = Mutex<[Double]>([])
        let start = Mutex<Moment?>(nil)
        let reading: @Sendable (TimeSource) -> QualityWatch = { time in
            start.withLock { $0 = time.now() }
            return QualityWatch(time: time, read: { interface in
                #expect(interface == "eth0")
                let t = start.withLock { $0! }.duration(to: time.now()).milliseconds / 1000
                qualityReads.withLock { $0.append(t) }
                return []
            }, report: { _ in })
        }
        let idle: @Sendable (Double, [Double]) -> PacketCounters = { t, started in
            let rounds = UInt64(started.count)
            let arps = UInt64(started.filter { $0 + 5 <= t }.count)
            return PacketCounters(tx: 10 + 6 * rounds + arps, rx: 10 + 7 * rounds + arps)
        }
        let (idleTimes, _) = await watchWithProbes(for: 130, quality: reading, idle)
        #expect(idleTimes == [1, 3, 7, 15, 30, 60, 90, 120])
        #expect(qualityReads.withLock { $0 } == [], "an idle machine is not read")

        let download: @Sendable (Double, [Double]) -> PacketCounters = { t, started in
            let flowing = t >= 40 ? UInt64((t - 40) * 50) : 0
            return PacketCounters(tx: 10 + 6 * UInt64(started.count) + flowing, rx: 10 + 7 * UInt64(started.count) + 2 * flowing)
        }
        let (times, _) = await watchWithProbes(for: 70, quality: reading, download)
        #expect(times == [1, 3, 7, 15, 30, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70], "no wake-up of its own")
        // On the watcher's wake-ups, at most one read per `QualityWatch.gap`.
        #expect(qualityReads.withLock { $0 } == [60, 65, 70])
    }

    /// Runs the watcher on `eth0` and the scheduler (probes answered at once,
    /// interval 30 s) for `seconds` of test time in 500 ms steps; `counters`
    /// gets the seconds since the start and the start times of the probes so
    /// far. Returns the read times and the probes made (time, cause).
    func watchWithProbes(for seconds: Int, quality: (@Sendable (TimeSource) -> QualityWatch)? = nil,
                         _ counters: @escaping @Sendable (Double, [Double]) -> PacketCounters)
        async -> (times: [Double], probes: [(Double, ProbeCause)])
    {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(),
                                    control: Bus(clock: ContinuousClock()))
        let monitor = ProbeMonitor(config: ProbeMonitor.Config(), context: context, clock: clock, files: HostFiles(),
                                   fetch: { _ in .failure(HTTPFailure(url: "", code: 0, kind: .other, message: "")) })
        let origin = clock.now
        let now: @Sendable () -> Double = { origin.duration(to: clock.now).milliseconds / 1000 }
        let seen = Seen()
        let prober = Task {
            await scheduler.run { cause in
                seen.probes.withLock { $0.append((now(), cause)) }
                return true
            }
        }
        await settle()
        let watch = quality?(TimeSource(clock))
        let watcher = Task {
            await monitor.watchCounters(scheduler: scheduler, path: { LinkPath(interface: "eth0", known: true, generation: 1) },
                                        counters: { _ in
                                            let t = now()
                                            seen.reads.withLock { $0.append(t) }
                                            return counters(t, seen.probes.withLock { $0.map(\.0) })
                                        }, quality: watch)
        }
        await settle()
        for _ in 0..<(seconds * 2) {
            await clock.advance(by: .milliseconds(500))
            await settle()
        }
        prober.cancel()
        watcher.cancel()
        await clock.advance(by: .seconds(60))
        await prober.value
        await watcher.value
        return (seen.reads.withLock { $0 }, seen.probes.withLock { $0 })
    }

    final class Seen: Sendable {
        let reads = Mutex<[Double]>([])
        let probes = Mutex<[(Double, ProbeCause)]>([])
    }

    /// 20 packets/s leave eth0 from the start; none come back until `heal`
    /// (seconds), then all do. `probe` gets a probe's start time and cause and
    /// says how long it waits for its answer (nil: answered at once) and
    /// whether it gets one. Runs the scheduler and the watcher for `seconds`
    /// of test time in 500 ms steps; returns the probes made (time, cause)
    /// and whether the last verdict is online.
    func healingBlackhole(heal: Double, for seconds: Int,
                          probe: @escaping @Sendable (Double, ProbeCause) -> (wait: Duration?, answered: Bool))
        async -> (probes: [(Double, ProbeCause)], online: Bool?)
    {
        let clock = TestClock()
        let scheduler = ProbeScheduler(clock: clock, interval: .seconds(30))
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(),
                                    control: Bus(clock: ContinuousClock()))
        let monitor = ProbeMonitor(config: ProbeMonitor.Config(), context: context, clock: clock, files: HostFiles(),
                                   fetch: { _ in .failure(HTTPFailure(url: "", code: 0, kind: .other, message: "")) })
        let origin = clock.now
        let now: @Sendable () -> Double = { origin.duration(to: clock.now).milliseconds / 1000 }
        let probes = Mutex<[(Double, ProbeCause)]>([])
        let prober = Task {
            await scheduler.run { cause in
                let t = now()
                probes.withLock { $0.append((t, cause)) }
                let (wait, answered) = probe(t, cause)
                if let wait {
                    do { try await clock.sleep(for: wait) } catch { return nil }
                }
                return answered
            }
        }
        let watcher = Task {
            await monitor.watchCounters(scheduler: scheduler, path: { LinkPath(interface: "eth0", known: true, generation: 1) },
                                        counters: { _ in
                                            let t = now()
                                            return PacketCounters(tx: UInt64(t * 20), rx: t < heal ? 0 : UInt64((t - heal) * 20))
                                        })
        }
        await settle()
        for _ in 0..<(seconds * 2) {
            await clock.advance(by: .milliseconds(500))
            await settle()
        }
        prober.cancel()
        watcher.cancel()
        await clock.advance(by: .seconds(10))
        await prober.value
        await watcher.value
        return (probes.withLock { $0 }, scheduler.plan.online)
    }

    @Test func answersWhileABlackholedProbeWaitsAbandonItForAFreshProbe() async {
        // Probes wait out a 5 s timeout (blackholed) unless abandoned.
        let (seen, online) = await healingBlackhole(heal: 14, for: 16) { _, cause in
            cause == .resumed ? (nil, true) : (.seconds(5), false)
        }
        // Probes at 0 (fails at 5), 6 (fails at 11) and 13 on the ramp; the last
        // is abandoned when the answers are seen, at 14.5, not waited out until 18.
        #expect(seen.map(\.0) == [0, 6, 13, 14.5])
        #expect(seen.map(\.1) == [.schedule, .schedule, .schedule, .resumed])
        #expect(online == true)
    }

    /// The upstream heals just after a probe into the blackhole gave up: the
    /// sample that follows carries that probe's end, but a probe that got no
    /// reply brought nothing in, so the user's answers in it are seen at
    /// once and probed (it took them for the probe's, backed off, and saw
    /// them a second later).
    @Test func answersRightAfterAFailedProbeAreSeenAtTheNextSample() async {
        // Probes fail after 1.25 s (a connect given up) unless they come after the answers.
        let heal = 12.1
        let (seen, online) = await healingBlackhole(heal: heal, for: 20) { t, _ in
            t >= heal ? (nil, true) : (.milliseconds(1250), false)
        }
        // On the ramp: 0 (fails at 1.25), 2.25 (fails at 3.5), 5.5 (6.75),
        // 10.75 (fails at 12); the answers arrive from 12.1 and are seen at 12.5.
        #expect(seen.map(\.0) == [0, 2.25, 5.5, 10.75, 12.5], "\(seen)")
        #expect(seen.last?.1 == .resumed, "\(seen)")
        #expect(online == true)
    }
}
