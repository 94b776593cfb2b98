import LifelineCore
import Testing

/// The quality estimator on made-up samples, one a second as the watcher takes
/// them while traffic flows; time is a plain `Moment`, nothing sleeps.
@Suite struct QualityEstimatorTests {
    /// A simulated flow: it sends `rate` segments a second, `loss` of them retransmitted.
    struct Flow {
        var id: UInt64
        var remote: [UInt8]
        var rttMs: Double
        var rate: UInt32 = 200
        var loss: Double = 0
        var sent: UInt32 = 0
        var retransmitted: UInt32 = 0
        var carry = 0.0
        var minRttMs = 0.0

        mutating func step() -> FlowSample {
            sent += rate
            carry += Double(rate) * loss
            retransmitted += UInt32(carry)
            carry -= Double(UInt32(carry))
            var sample = FlowSample(id: id, remote: remote, rttMicros: UInt32(rttMs * 1000), retransmits: retransmitted,
                                    segmentsOut: sent, segmentsIn: sent)
            sample.minRttMicros = UInt32(minRttMs * 1000)
            return sample
        }
    }

    static func at(_ seconds: Int) -> Moment { Moment(offset: .seconds(seconds)) }

    /// Runs `seconds` samples; returns each published quality with its second.
    static func run(_ estimator: inout QualityEstimator, _ flows: inout [Flow], seconds: Range<Int>,
                    step: (Int, inout [Flow]) -> Void = { _, _ in }) -> [(Int, Quality)] {
        var published: [(Int, Quality)] = []
        for second in seconds {
            step(second, &flows)
            let samples = flows.indices.map { flows[$0].step() }
            if let q = estimator.sample(samples, at: at(second)) { published.append((second, q)) }
        }
        return published
    }

    static func servers(_ count: Int, rttMs: Double = 30, loss: Double = 0) -> [Flow] {
        (0..<count).map { Flow(id: UInt64($0), remote: [10, 0, UInt8($0), 1], rttMs: rttMs, loss: loss) }
    }

    @Test func aHealthyLinkIsGoodAfterTheHold() {
        var e = QualityEstimator()
        var flows = Self.servers(3)
        let p = Self.run(&e, &flows, seconds: 0..<30)
        #expect(p.map(\.1.level) == [.good])
        #expect(p.first?.0 == 10)  // the first value holds `hold` first
        #expect(p.first?.1.rttMs == 30)
        #expect(p.first?.1.retransmitShare == 0)
        #expect(p.first?.1.remotes == 3)
    }

    @Test func lossLevelsAreToldApart() {
        for (loss, expected) in [(0.0, QualityLevel.good), (0.02, .degraded), (0.10, .poor), (0.30, .poor)] {
            var e = QualityEstimator()
            var flows = Self.servers(3, loss: loss)
            let p = Self.run(&e, &flows, seconds: 0..<40)
            #expect(p.last?.1.level == expected, "loss \(loss): \(p.map(\.1))")
        }
    }

    @Test func retransmitsAreCountedPerSampleNotOverTheFlowsLife() {
        // Two minutes of heavy loss, then none: the window forgets the old loss.
        var e = QualityEstimator()
        var flows = Self.servers(3, loss: 0.2)
        var p = Self.run(&e, &flows, seconds: 0..<120)
        #expect(p.last?.1.level == .poor)
        for i in flows.indices { flows[i].loss = 0 }
        p = Self.run(&e, &flows, seconds: 120..<200)
        #expect(p.last?.1.level == .good)
        #expect(p.last.map { $0.0 <= 120 + 30 + 10 + 1 } == true)  // window + hold
    }

    @Test func slowStartLossesOfNewFlowsAreNotTheNetwork() {
        // A saturated link: every 5 s a new flow starts and loses 10 % of its first 20 segments.
        var e = QualityEstimator()
        var flows = Self.servers(3)
        var next: UInt64 = 100
        let p = Self.run(&e, &flows, seconds: 0..<60) { second, flows in
            guard second % 5 == 0 else { return }
            next += 1
            var f = Flow(id: next, remote: [10, 0, UInt8(next % 3), 1], rttMs: 30, rate: 20, loss: 0.1)
            _ = f.step()
            flows.append(f)
            // It stops after its burst: later samples see it quiet.
            flows = flows.map { var f = $0; if f.id != next, f.rate == 20 { f.rate = 0 }; return f }
        }
        #expect(p.map(\.1.level) == [.good])
    }

    @Test func lossesAtAFullQueueAreTheUsersOwnCongestion() {
        // A saturated uplink with a 100 ms buffer: every flow waits in the queue
        // (RTT 90 ms over a 2 ms path) and the full queue drops 4 %.
        var e = QualityEstimator()
        var flows = Self.servers(3, rttMs: 90, loss: 0.04)
        for i in flows.indices { flows[i].minRttMs = 2 }
        #expect(Self.run(&e, &flows, seconds: 0..<40).map(\.1.level) == [.good])
        // The same loss with no queue (RTT near its lowest) is the path's.
        var lossy = QualityEstimator()
        var path = Self.servers(3, rttMs: 25, loss: 0.04)
        for i in path.indices { path[i].minRttMs = 20 }
        #expect(Self.run(&lossy, &path, seconds: 0..<40).last?.1.level == .degraded)
    }

    @Test func oneDeadServerIsNotTheNetwork() {
        var e = QualityEstimator()
        var flows = Self.servers(3)
        _ = Self.run(&e, &flows, seconds: 0..<20)
        // Server 0 stops answering: its flow only retransmits, its srtt stale and growing.
        flows[0].rate = 1
        flows[0].loss = 1
        flows[0].rttMs = 3000
        let p = Self.run(&e, &flows, seconds: 20..<80)
        #expect(p.isEmpty, "\(p.map(\.1))")
        #expect(e.published?.level == .good)
    }

    @Test func oneRemoteAloneSaysNothing() {
        var e = QualityEstimator()
        var flows = [Flow(id: 1, remote: [10, 0, 0, 1], rttMs: 30, loss: 0.3)]
        let p = Self.run(&e, &flows, seconds: 0..<40)
        #expect(p.map(\.1.level) == [.good])
        #expect(p.first?.1.retransmitShare == nil)
    }

    @Test func slowRoundTripsOnEveryRemoteAreDegradedThenPoor() {
        var e = QualityEstimator()
        var flows = Self.servers(3, rttMs: 450)
        #expect(Self.run(&e, &flows, seconds: 0..<20).last?.1.level == .degraded)
        for i in flows.indices { flows[i].rttMs = 1500 }
        #expect(Self.run(&e, &flows, seconds: 20..<40).last?.1.level == .poor)
    }

    @Test func aShortBurstShorterThanTheHoldPublishesNothing() {
        var e = QualityEstimator()
        var flows = Self.servers(3)
        _ = Self.run(&e, &flows, seconds: 0..<40)
        let p = Self.run(&e, &flows, seconds: 40..<80) { second, flows in
            for i in flows.indices { flows[i].rttMs = (45..<50).contains(second) ? 2000 : 30 }
        }
        #expect(p.isEmpty)
    }

    @Test func dnsFailuresAndASlowProbeCount() {
        var e = QualityEstimator()
        e.hold = .zero
        #expect(e.probe(rttMs: 40, dnsFailed: false, at: Self.at(0))?.level == .good)
        #expect(e.probe(rttMs: nil, dnsFailed: true, at: Self.at(1))?.level == .degraded)
        _ = e.probe(rttMs: nil, dnsFailed: true, at: Self.at(2))
        #expect(e.probe(rttMs: nil, dnsFailed: true, at: Self.at(3))?.level == .poor)
        // They age out of the window.
        #expect(e.probe(rttMs: 1500, dnsFailed: false, at: Self.at(60))?.level == .degraded)
        #expect(e.probe(rttMs: 40, dnsFailed: false, at: Self.at(61))?.level == .good)
    }

    @Test func theNumbersBehindALevelThatHoldsAreRefreshedSeldom() {
        var e = QualityEstimator()
        var flows = Self.servers(3)
        let p = Self.run(&e, &flows, seconds: 0..<700) { second, flows in
            for i in flows.indices { flows[i].rttMs = Double(30 + second % 7) }
        }
        #expect(p.count == 3)  // the first, then one per 5 minutes
        #expect(p.allSatisfy { $0.1.level == .good })
    }

    @Test func resetForgetsThePath() {
        var e = QualityEstimator()
        var flows = Self.servers(3, loss: 0.3)
        _ = Self.run(&e, &flows, seconds: 0..<30)
        #expect(e.published?.level == .poor)
        e.reset()
        #expect(e.published == nil)
    }
}
