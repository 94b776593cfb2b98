import Glibc
import LifelineCore
import LifelinePlatform
import LifelineTestKit
import Synchronization
import Testing

@Suite struct SerialThreadTests {
    struct Boom: Error, Equatable {}

    @Test func runsClosuresInOrderOnOneNamedThreadOffThePool() async throws {
        let thread = SerialThread(name: "lifeline-test")
        defer { thread.stop() }
        let order = Mutex<[Int]>([])
        let names = Mutex<Set<String>>([])
        for n in 0..<50 {
            try await thread.run {
                order.withLock { $0.append(n) }
                let name = (try? Files.readText("/proc/thread-self/comm")) ?? "?"
                names.withLock { _ = $0.insert(name) }
            }
        }
        #expect(order.withLock { $0 } == Array(0..<50))
        #expect(names.withLock { $0 } == ["lifeline-test\n"])
        #expect(try await thread.run { 6 * 7 } == 42)
        await #expect(throws: Boom.self) { try await thread.run { throw Boom() } }
    }

    /// `perform` queues a loop that runs until stopped some other way, after the
    /// work queued before it; once the thread has stopped it refuses.
    @Test func performQueuesWorkWithoutWaiting() async throws {
        let thread = SerialThread(name: "lifeline-test")
        let done = Mutex<[String]>([])
        try await thread.run { done.withLock { $0.append("run") } }
        #expect(thread.perform { done.withLock { $0.append("perform") } })
        #expect(await eventually { done.withLock { $0 } == ["run", "perform"] })
        thread.stop()
        #expect(await eventually { !thread.perform {} })
    }

    @Test func aCancelledCallerResumesWhileTheThreadIsBlocked() async throws {
        let thread = SerialThread(name: "lifeline-block")
        defer { thread.stop() }
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd); close(writeEnd) }
        // A read with nothing to read: a real blocking call.
        let waiting = Task { try await thread.run { var b: UInt8 = 0; return read(readEnd, &b, 1) } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        // The blocked read still ends in its own time, and the thread goes on.
        var one: UInt8 = 1
        #expect(write(writeEnd, &one, 1) == 1)
        #expect(try await thread.run { "after" } == "after")
    }

    @Test func stopLetsTheWorkInHandFinishAndRefusesNewWork() async throws {
        let thread = SerialThread(name: "lifeline-stop")
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd); close(writeEnd) }
        let started = Mutex(false)
        let inHand = Task {
            try await thread.run { () -> UInt8 in
                started.withLock { $0 = true }
                var b: UInt8 = 0
                _ = read(readEnd, &b, 1)
                return b
            }
        }
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        thread.stop()
        await #expect(throws: SerialThread.Stopped.self) { try await thread.run { 1 } }
        var seven: UInt8 = 7
        #expect(write(writeEnd, &seven, 1) == 1)
        #expect(try await inHand.value == 7)
    }
}
