import Foundation
import LifelineCore
import LifelinePlatform
import LogSink
import LifelineTestKit
import Synchronization
import Testing

/// The log's blocking calls (open, write, fsync) run on a thread of their own:
/// a disk that hangs holds up the log, never the other sinks or the debounce timer.
@Suite struct LogSinkThreadTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("logthread-\(UUID().uuidString.prefix(8))").path

    func context() -> PluginContext {
        PluginContext(name: "sink log", logger: .init(label: "test"),
                      paths: Paths(configHome: dir, stateHome: dir + "/state", runtimeDir: dir + "/run"),
                      control: Bus(clock: ContinuousClock()))
    }

    @Test func aLogWriteThatBlocksDelaysNoOtherSink() async throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // More stuck logs than the cooperative pool has threads: each log's file
        // is a FIFO nobody reads, so opening it blocks for good.
        let fifos = (0...max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))).map { dir + "/fifo-\($0)" }
        for fifo in fifos { #expect(mkfifo(fifo, 0o600) == 0) }
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .milliseconds(20), up: .milliseconds(20)))
        let logs = try fifos.map { fifo in
            var config = LogSink.Config.defaults
            config.path = fifo
            let sink = try LogSink(config: config, context: context())
            let mailbox = bus.attachSink(policy: LogSink.delivery)
            return Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        }
        let memory = InMemorySink()
        let memoryMailbox = bus.attachSink(policy: .latest)
        let memoryTask = Task { try await memory.run(updates: SinkUpdates(memoryMailbox)) }
        defer { memoryTask.cancel() }
        bus.makeMonitorHandle(name: "test").publish(Observation(role: .reachability, state: .online, interface: "eth0", reason: "up"))

        // Watched from a thread of its own: a watcher on the pool would be stuck
        // with it. It then opens the FIFOs for reading, which frees the logs.
        let readers = Mutex<[Int32]>([])
        let seenWhileLogsBlocked: Bool = await withCheckedContinuation { done in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(5)
                while memory.states.isEmpty, Date() < deadline { usleep(5000) }
                let seen = !memory.states.isEmpty
                readers.withLock { $0 = fifos.map { open($0, O_RDONLY | O_NONBLOCK) } }
                done.resume(returning: seen)
            }
        }
        for log in logs { log.cancel() }
        for log in logs { _ = try? await log.value }
        for fd in readers.withLock({ $0 }) { close(fd) }
        #expect(seenWhileLogsBlocked)
        #expect(memory.states == [.online])
    }
}
