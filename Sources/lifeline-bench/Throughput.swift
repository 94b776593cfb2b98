import LifelineCore

/// Pushes observations through one bus into four sinks that take every update
/// as fast as they can, and reports observations per second for two mixes:
/// - `every change published`: debounce 0 and the state alternates, so every
///   observation is a transition fanned out to all four sinks (the worst case);
/// - `steady with attribute churn`: default debounce, state steady, rtt changing
///   on every observation (what a busy probe looks like).
enum Throughput {
    static func run(_ args: [String]) async throws {
        let count = args.first.flatMap(Int.init) ?? 2_000_000
        // A second argument picks the mixes whose name contains it ("flapping"), to
        // profile one at a time.
        let only = args.dropFirst().first
        print("observations: \(count) per run, 4 sinks, best of 3")
        for mix in mixes where only.map({ mix.label.contains($0) }) ?? true {
            try await measure(mix.label, count: count, debounce: mix.debounce, mix.make)
        }
    }

    static let mixes: [(label: String, debounce: DebounceSettings, make: @Sendable (Int) -> Observation)] = [
        ("every change published", DebounceSettings(down: .zero, up: .zero), { n in
            Observation(role: .reachability, state: n % 2 == 0 ? .online : .limited, interface: "eth0", reason: "bench")
        }),
        ("steady with attribute churn", DebounceSettings(), { n in
            Observation(role: .reachability, state: .online, interface: "eth0", reason: "bench", rttMs: Double(n % 100))
        }),
        ("flapping inside the debounce window", DebounceSettings(), { n in
            Observation(role: n % 3 == 0 ? .link : .reachability, state: n % 2 == 0 ? .online : .offline,
                        interface: "eth0", reason: "bench")
        }),
    ]

    static func measure(
        _ label: String, count: Int, debounce: DebounceSettings, _ make: (Int) -> Observation
    ) async throws {
        var best = Double.infinity
        var delivered = 0
        for _ in 0..<3 {
            let bus = Bus(clock: ContinuousClock(), debounce: debounce)
            let tasks = (0..<4).map { _ in
                let mailbox = bus.attachSink(policy: .latest)
                return Task.detached {
                    var n = 0
                    for await _ in SinkUpdates(mailbox) { n += 1 }
                    return n
                }
            }
            let monitor = bus.makeMonitorHandle(name: "bench")
            let observations = (0..<1024).map(make)
            let clock = ContinuousClock()
            let start = clock.now
            for n in 0..<count { monitor.publish(observations[n & 1023]) }
            let elapsed = start.duration(to: clock.now)
            bus.shutdown()
            var total = 0
            for t in tasks { total += await t.value }
            best = min(best, elapsed.milliseconds / 1000)
            delivered = total
        }
        let rate = Double(count) / best
        print("  \(label): \(Int(rate).formatted3) observations/s (\(delivered) updates taken by the 4 sinks in the last run)")
    }
}

extension Int {
    /// 1234567 → "1,234,567" without Foundation.
    var formatted3: String {
        let digits = String(self)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}
