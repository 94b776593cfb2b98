import Foundation
import LifelineCore
import LifelinePlatform
import LifelineServices
import Logging
import ServiceLifecycle
import Testing

/// The state file is the daemon's own service: it follows the bus from the
/// start, and it stops after the plugin host, so it still writes the host's
/// last word, then takes the file away.
@Suite struct StateFileServiceTests {
    /// Stands in for the plugin host: publishes, and on shutdown says the
    /// daemon stops, as the host does before it returns.
    final class LastWords: Service, @unchecked Sendable {
        let bus: Bus
        let stateFile: String
        /// Whether the state file was still there once the host had said its last word.
        var fileOutlivedTheHost = false
        init(bus: Bus, stateFile: String) {
            self.bus = bus
            self.stateFile = stateFile
        }
        func run() async throws {
            let link = bus.makeMonitorHandle(name: "link")
            link.publish(Observation(role: .link, state: .online, interface: "eth0", reason: "up"))
            try? await gracefulShutdown()
            bus.release(link)
            bus.announceStop()
            fileOutlivedTheHost = FileManager.default.fileExists(atPath: stateFile)
        }
    }

    @Test func itWritesWhatTheHostSaysLastAndThenRemovesTheFile() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("state-service-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = Paths(configHome: root + "/config", stateHome: root + "/state", runtimeDir: root + "/run")
        let bus = Bus(clock: ContinuousClock(), debounce: .init(down: .zero, up: .zero))
        let host = LastWords(bus: bus, stateFile: paths.stateFile)
        // In the daemon's order: the state file before the host, so it stops after it.
        let group = ServiceGroup(services: [StateFileService(bus: bus, paths: paths), host], logger: Logger(label: "test"))
        let running = Task { try await group.run() }

        func state() -> String? {
            guard let data = FileManager.default.contents(atPath: paths.stateFile),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return json["state"] as? String
        }
        try await waitUntil { state() == "online" }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(host.fileOutlivedTheHost, "the state file was gone before the plugin host stopped")
        #expect(!FileManager.default.fileExists(atPath: paths.stateFile), "the state file outlived the daemon")
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { Issue.record("timed out"); return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
