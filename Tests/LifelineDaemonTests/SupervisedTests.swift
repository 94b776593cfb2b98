import Clocks
import LifelineCore
import Logging
import Synchronization
import LifelineTestKit
import Testing

@testable import LifelineDaemon

/// The supervisor's back-off on swift-clocks' `TestClock`: no test sleeps.
@Suite struct SupervisedTests {
    final class Attempts: Sendable {
        let started = Mutex<[Int]>([])
        var count: Int { started.withLock { $0.count } }
    }

    struct Boom: Error {}

    @Test func aFailingPluginIsRestartedWithADoublingBackoff() async {
        let clock = TestClock()
        let attempts = Attempts()
        let supervised = Supervised(
            name: "flaky", logger: Logger(label: "test"),
            backoff: .init(initial: .seconds(1), maximum: .seconds(4)), time: TimeSource(clock)
        ) { attempt in
            attempts.started.withLock { $0.append(attempt) }
            throw Boom()
        }
        let task = Task { try await supervised.run() }
        defer { task.cancel() }
        #expect(await eventually { attempts.count == 1 && supervised.backingOff.now })
        await clock.advance(by: .milliseconds(999))
        #expect(attempts.count == 1)
        await clock.advance(by: .milliseconds(1))
        #expect(await eventually { attempts.count == 2 })
        // Then 2 s, then 4 s, and never more than the maximum.
        await clock.advance(by: .seconds(2))
        #expect(await eventually { attempts.count == 3 })
        await clock.advance(by: .seconds(3))
        #expect(attempts.count == 3)
        await clock.advance(by: .seconds(1))
        #expect(await eventually { attempts.count == 4 })
        await clock.advance(by: .seconds(4))
        #expect(await eventually { attempts.count == 5 })
        #expect(attempts.started.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    /// What a plugin's logger was told, level and text.
    final class LogLines: Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
        func at(_ level: Logger.Level) -> [String] { lines.withLock { $0.filter { $0.0 == level }.map(\.1) } }
    }

    struct CapturingHandler: LogHandler {
        let sink: LogLines
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?,
                 source: String, file: String, function: String, line: UInt) {
            sink.lines.withLock { $0.append((level, message.description)) }
        }
    }

    /// A plugin failing the same way on every restart (no session bus on a
    /// headless machine) fills no log: said once, retried quietly, and its
    /// recovery said once too.
    @Test func theSameFailureAgainIsSaidOnceAndTheRecoveryToo() async {
        let clock = TestClock()
        let attempts = Attempts()
        let log = LogLines()
        let supervised = Supervised(
            name: "sink #1 (dbus)", logger: Logger(label: "test") { _ in CapturingHandler(sink: log) },
            backoff: .init(initial: .seconds(1), maximum: .seconds(4)), time: TimeSource(clock)
        ) { attempt in
            attempts.started.withLock { $0.append(attempt) }
            if attempt < 4 { throw Boom() }
            if attempt == 4 { try await clock.sleep(for: .seconds(10)) }  // then it runs until it stops
            throw CancellationError()
        }
        let task = Task { try await supervised.run() }
        defer { task.cancel() }
        #expect(await eventually { attempts.count == 1 && supervised.backingOff.now })
        for (wait, count) in [(1, 2), (2, 3), (4, 4)] {
            await clock.advance(by: .seconds(wait))
            #expect(await eventually { attempts.count == count && supervised.backingOff.now })
        }
        await clock.advance(by: .seconds(4))
        #expect(await eventually { attempts.count == 5 })
        #expect(log.at(.error).count == 1, "\(log.at(.error))")
        #expect(log.at(.error).first?.hasPrefix("sink #1 (dbus) failed: Boom()") == true)
        #expect(log.at(.notice).isEmpty)
        // Running as long as the back-off's maximum is what counts as recovered.
        await clock.advance(by: .seconds(4))
        #expect(await eventually { log.at(.notice).count == 1 })
        #expect(log.at(.notice).first?.hasPrefix("sink #1 (dbus) is running again") == true)
        #expect(log.at(.error).count == 1)
    }

    @Test func aFatalErrorIsNotRestartedButRethrown() async {
        let attempts = Attempts()
        let supervised = Supervised(name: "fatal", logger: Logger(label: "test"), time: TimeSource(TestClock())) { _ in
            attempts.started.withLock { $0.append(0) }
            throw PluginFatalError(exitCode: 3, "another daemon owns the name")
        }
        await #expect(throws: PluginFatalError.self) { try await supervised.run() }
        #expect(attempts.count == 1)
    }

    @Test func cancellationDuringTheBackoffEndsItQuietly() async {
        let clock = TestClock()
        let supervised = Supervised(name: "x", logger: Logger(label: "test"), time: TimeSource(clock)) { _ in throw Boom() }
        let task = Task { try await supervised.run() }
        #expect(await eventually { supervised.backingOff.now })
        task.cancel()
        await #expect(throws: Never.self) { try await task.value }
    }
}
