import LifelineCore
import LifelineTestKit
import Logging
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// The daemon's start: the probe monitor and the link monitor start side by
/// side, and the link monitor's first word changes the path from unknown to
/// known, which makes the core forget any verdict measured before it.
@Suite struct ProbeStartTests {
    final class Fetches: Sendable {
        let count = Mutex(0)
    }

    /// A probe monitor on `bus` whose every request is answered at once, counted in `fetches`.
    static func startProbe(bus: Bus, handle: MonitorHandle, fetches: Fetches) -> Task<Void, any Error> {
        var config = ProbeMonitor.Config()
        config.url = "http://10.0.0.1/check"
        config.family = .ipv4  // one request per probe, whatever routes this machine has
        let context = PluginContext(name: "monitor probe", logger: Logger(label: "test"), paths: .fromEnvironment(), control: bus)
        let monitor = ProbeMonitor(config: config, context: context, clock: ContinuousClock(), files: HostFiles(sys: "/nonexistent"),
                                   fetch: { _ in
                                       fetches.count.withLock { $0 += 1 }
                                       return .success(HTTPReply(status: 200, headers: [], body: Array("NetworkManager is online\n".utf8),
                                                                 truncated: false, redirect: nil, rttMs: 2))
                                   })
        return Task { try await monitor.run(handle: handle) }
    }

    /// The link monitor speaks 100 ms after the start (as the kernel's dump
    /// comes back): one request, not a first one whose verdict is forgotten
    /// and a second one a second later.
    @Test func theFirstProbeWaitsForTheLinkMonitorsFirstWord() async throws {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let link = bus.makeMonitorHandle(name: "netlink")
        let handle = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        let fetches = Fetches()
        let running = Self.startProbe(bus: bus, handle: handle, fetches: fetches)
        defer { running.cancel() }
        try await Task.sleep(for: .milliseconds(100))  // the link monitor's dump takes a moment: the scenario, not a wait
        link.publish(Observation(role: .link, state: .online, interface: "eth0"))
        #expect(await eventually { bus.current.state == .online && bus.current.reason.hasPrefix("probe answered") })
        // A second probe (the path changed under the first) would come one
        // second after the first: the fixed window covers it.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(fetches.count.withLock { $0 } == 1, "\(fetches.count.withLock { $0 }) requests at the start")
    }

    /// With no link monitor the path stays unknown: the first probe goes after
    /// the short wait for a word that never comes.
    @Test func withoutALinkMonitorTheFirstProbeGoesAfterAShortWait() async throws {
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let handle = bus.makeMonitorHandle(name: "probe", remeasuresReachability: true)
        let fetches = Fetches()
        let running = Self.startProbe(bus: bus, handle: handle, fetches: fetches)
        defer { running.cancel() }
        #expect(await eventually { bus.current.state == .online })
        #expect(fetches.count.withLock { $0 } == 1)
    }
}
