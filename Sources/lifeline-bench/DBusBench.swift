import Foundation
import LifelineConfig
import LifelineCore
import LifelineDaemon
import LifelineDBus
import LifelinePlatform
import LifelineServices
import Logging

/// `lifeline-bench dbus`: on the session bus in the environment (bench/dbus.sh
/// starts a private one), measures
/// - publish → StateChanged at a subscriber process: the bench publishes an
///   observation into a real `Bus` with the real `DBusSink` and stamps the
///   wall clock; `dbus-monitor` (another process) stamps the signal's arrival;
/// - `Check()` and `GetStatus()` round trips from a client connection, with a
///   checker that answers at once (a probe against a local target).
enum DBusBench {
    static func run(_ args: [String]) async {
        let count = args.firstIndex(of: "--count").flatMap { Int(args[$0 + 1]) } ?? 500
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero), logger: logger)
        // The daemon's session-bus service, as `Daemon` starts it, with the `dbus` sink publishing to it.
        let session = SessionBusService(control: bus, logger: logger)
        let paths = Paths.fromEnvironment()
        let context = PluginContext(name: "sink dbus", logger: logger, paths: paths, control: bus,
                                    services: DaemonServices(eventLog: EventLogLocation(paths.defaultLogFile), sessionBus: session.object))
        do {
            try await session.claim()
            Task { try await session.run() }
            // The sink as the daemon builds it: through the config loader and the registry.
            // Given as a parsed table: the loader parses TOML text in a child process
            // (`lifeline-cli config parse-toml`), which this program cannot serve.
            let table = ConfigTable([("sink", .array([.table(ConfigTable([("kind", .string("dbus"))]))]))])
            let plugin = try ConfigLoader.load(table: table, text: "", file: "(bench)").sinks[0]
            try await start(Registry.sink(kind: plugin.kind)!, config: plugin.config, bus: bus, context: context)
        } catch {
            print("cannot serve on the session bus: \(error)")
            exit(1)
        }

        // A checker answering every check at once, like a probe of a local server.
        let probe = bus.makeMonitorHandle(name: "bench probe")
        Task {
            for await _ in probe.checkRequests() {
                probe.publish(Observation(role: .reachability, state: .online, interface: "bench0", reason: "local probe answered"))
            }
        }
        probe.publish(Observation(role: .reachability, state: .online, interface: "bench0", reason: "start"))

        let monitor = Subscriber()
        let signalLatencies = await measureSignals(bus: bus, monitor: monitor, count: count)
        monitor.stop()
        report("publish -> StateChanged at a subscriber process (dbus-monitor)", signalLatencies)

        let client = try! BusConnection.connect(address: BusConnection.sessionBusAddress()!)
        for member in ["Check", "GetStatus"] {
            var samples: [Double] = []
            for _ in 0..<count {
                let m = try! BusMessage.methodCall(destination: Lifeline1.busName, path: Lifeline1.objectPath,
                                                   interface: Lifeline1.interfaceName, member: member)
                let start = ContinuousClock.now
                _ = try! client.callBlocking(m, timeout: .seconds(5))
                samples.append(ms(start.duration(to: .now)))
            }
            report("\(member)() round trip", samples)
        }
        exit(0)
    }

    static func start<S: Sink>(_ type: S.Type, config: any Codable & Sendable, bus: Bus, context: PluginContext) async throws {
        let config = config as! S.Config
        let mailbox = bus.attachSink(policy: S.delivery)
        let sink = try S(config: config, context: context)
        Task { try await sink.run(updates: SinkUpdates(mailbox)) }
    }

    static func measureSignals(bus: Bus, monitor: Subscriber, count: Int) async -> [Double] {
        let link = bus.makeMonitorHandle(name: "bench link")
        var samples: [Double] = []
        for i in 0..<(count + 20) {
            let state: ConnectivityState = i % 2 == 0 ? .offline : .online
            let sent = WallClock.micros()
            // A link observation decides alone; offline beats the probe's online.
            link.publish(Observation(role: .link, state: state, interface: state == .online ? "bench0" : "", reason: "bench \(i)"))
            guard let arrived = monitor.nextSignalTime() else { break }
            if i >= 20 { samples.append(Double(arrived - sent) / 1000) }  // the first ones warm up
        }
        return samples
    }

    static func ms(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    static func report(_ what: String, _ samples: [Double]) {
        guard !samples.isEmpty else {
            print("\(what): no samples")
            return
        }
        let sorted = samples.sorted()
        func pct(_ p: Double) -> String { String(format: "%.3f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) }
        print("\(what): n=\(sorted.count) p50=\(pct(0.5)) ms p95=\(pct(0.95)) ms p99=\(pct(0.99)) ms max=\(String(format: "%.3f", sorted.last!)) ms")
    }
}

/// `dbus-monitor` subscribed to StateChanged; each signal line carries its
/// arrival time (`time=SECONDS.MICROS`, taken by dbus-monitor on receipt).
final class Subscriber: @unchecked Sendable {
    private let process = Process()
    private let pipe = Pipe()
    private var buffer = Data()

    init() {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        process.arguments = ["--session", "type='signal',interface='org.lifeline.Lifeline1',member='StateChanged'"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try! process.run()
        // Ready once it has become a monitor (it prints its own NameLost).
        while let line = nextLine(), !line.contains("member=NameLost") {}
    }

    private func nextLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                return line
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// The arrival time (µs since the epoch) of the next StateChanged.
    func nextSignalTime() -> Int64? {
        while let line = nextLine() {
            guard line.hasPrefix("signal "), line.contains("member=StateChanged"),
                  let r = line.range(of: "time="), let end = line[r.upperBound...].firstIndex(of: " ") else { continue }
            let parts = line[r.upperBound..<end].split(separator: ".")
            guard parts.count == 2, let s = Int64(parts[0]), let us = Int64(parts[1]) else { continue }
            return s * 1_000_000 + us
        }
        return nil
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
