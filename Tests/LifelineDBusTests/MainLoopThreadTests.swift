import LifelineGLib
import Synchronization
import Testing

@Suite struct MainLoopThreadTests {
    @Test func performRunsInOrderOnTheLoopThread() async throws {
        let loop = MainLoopThread(name: "test-loop")
        defer { loop.stop() }
        #expect(!loop.isCurrent)
        let seen = Mutex<[Int]>([])
        let onLoop = Mutex(true)
        for i in 0..<1000 {
            loop.perform {
                seen.withLock { $0.append(i) }
                if !loop.isCurrent { onLoop.withLock { $0 = false } }
            }
        }
        // `sync` queues behind everything performed before it.
        let count = loop.sync { seen.withLock { $0.count } }
        #expect(count == 1000)
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(onLoop.withLock { $0 })
    }

    @Test func syncAndRunReturnValuesAndErrors() async throws {
        struct Boom: Error {}
        let loop = MainLoopThread(name: "test-loop")
        defer { loop.stop() }
        #expect(loop.sync { loop.isCurrent })
        // Inline when already on the loop: no deadlock.
        #expect(loop.sync { loop.sync { 42 } } == 42)
        #expect(throws: Boom.self) { try loop.sync { () throws(Boom) -> Int in throw Boom() } }
        #expect(try await loop.run { loop.isCurrent })
        await #expect(throws: Boom.self) { try await loop.run { () throws -> Int in throw Boom() } }
    }

    @Test func timeoutsFireOnTheLoopUntilCancelled() async throws {
        let loop = MainLoopThread(name: "test-loop")
        defer { loop.stop() }
        let ticks = Mutex(0)
        let source = loop.addTimeout(.milliseconds(5)) {
            ticks.withLock { $0 += 1 }
            return true
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while ticks.withLock({ $0 }) < 3, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(ticks.withLock { $0 } >= 3)
        loop.sync { source.cancel() }
        let after = ticks.withLock { $0 }
        try await Task.sleep(for: .milliseconds(30))
        #expect(ticks.withLock { $0 } == after, "a cancelled timeout fired again")
    }
}
