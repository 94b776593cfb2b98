import Foundation
import LifelineTestKit
import Testing

/// The one way the integration tests start processes: children that SIGTERM
/// reaches, output that never stalls a child, and nothing left behind.
@Suite(.serialized)
struct SpawnedTests {
    /// A child starts with an empty signal mask whatever the test thread blocks,
    /// so SIGTERM ends it (reported as 128+15).
    @Test func sigtermReachesAChildWhileTheTestBlocksIt() throws {
        var term = sigset_t(), previous = sigset_t()
        sigemptyset(&term)
        sigaddset(&term, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &term, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        let child = try Spawned(["sleep", "60"])
        let blocked = (try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
        #expect(blocked?.hasSuffix("0000000000000000") == true, "\(blocked ?? "no SigBlk line")")
        #expect(child.signal(SIGTERM))
        let deadline = ContinuousClock.now + .seconds(5)
        while child.isRunning, ContinuousClock.now < deadline { usleep(2_000) }
        #expect(child.exitStatus == 128 + SIGTERM)
    }

    /// Far more output than a pipe holds, on both streams, and input given as bytes.
    @Test func runCapturesLargeOutputOnBothStreams() throws {
        let size = 4 << 20
        let r = try Spawned.run(["sh", "-c", "head -c \(size) /dev/zero | tr '\\0' o; head -c \(size) /dev/zero | tr '\\0' e >&2; exit 3"])
        #expect(r.status == 3)
        #expect(r.stdout.count == size && r.stdout.allSatisfy { $0 == UInt8(ascii: "o") })
        #expect(r.stderr.count == size && r.stderr.allSatisfy { $0 == UInt8(ascii: "e") })

        let echoed = try Spawned.run(["cat"], stdin: .bytes(Array("line one\nline two\n".utf8)))
        #expect(echoed.status == 0 && echoed.stdout == Array("line one\nline two\n".utf8))
    }

    /// A child that ignores SIGTERM is killed once the timeout has passed.
    @Test func stopEscalatesToSigkill() async throws {
        let child = try Spawned(["python3", "-c", """
            import signal, time
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print("ready", flush=True)
            time.sleep(60)
            """], stdout: .capture)
        await Harness.waitUntil("the child to ignore SIGTERM") { child.capturedStdout == Array("ready\n".utf8) }
        #expect(child.stop(timeout: .milliseconds(300)) == 128 + SIGKILL)
        #expect(!child.isRunning)
    }

    /// A child dropped while running is killed and reaped: no process and no zombie stays.
    @Test func nothingIsLeftRunning() throws {
        var pid: pid_t = 0
        do {
            let child = try Spawned(["sleep", "60"])
            pid = child.pid
            #expect(child.isRunning)
        }
        #expect(kill(pid, 0) == -1 && errno == ESRCH)

        let stopped = try Spawned(["sleep", "60"])
        #expect(stopped.stop() == 128 + SIGTERM)
        #expect(kill(stopped.pid, 0) == -1 && errno == ESRCH)
    }
}
