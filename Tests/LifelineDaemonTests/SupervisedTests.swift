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
