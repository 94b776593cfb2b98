import Glibc
import LifelinePlatform
import Testing

/// `Child`, the one way to wait for a child, against real programs: its end
/// comes through its pidfd, `collect` bounds what it prints and how long it
/// runs, `stop` escalates, and every child is reaped.
@Suite struct ChildTests {
    /// A child of `sh -c script`, its standard input the read end of a pipe
    /// whose write end the test holds (closing it is the child's cue).
    func start(_ script: String, group: Bool = false) throws -> (child: Child, cue: Int32) {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        defer { close(ends[0]) }
        var spawn = Spawn(.path("/bin/sh"), arguments: ["sh", "-c", script])
        spawn.standardInput = ends[0]
        spawn.newProcessGroup = group
        return (try spawn.start(), ends[1])
    }

    /// Neither running nor a zombie: reaped.
    func isGone(_ pid: pid_t) -> Bool { kill(pid, 0) != 0 && errno == ESRCH }

    @Test func itsEndIsAwaitedAndReapedWhenTheChildEnds() async throws {
        let (child, cue) = try start("read x; exit 7")
        #expect(child.ending() == nil)
        #expect(await child.exit(by: .now + .milliseconds(50)) == nil, "still running: the wait ends at its deadline")
        close(cue)
        #expect(await child.exit(by: .now + .seconds(10)) == .exited(7))
        #expect(isGone(child.pid))
        // Reaped, it is signalled no more: its pid may name another process now.
        #expect(!child.signal(SIGTERM))
    }

    @Test func theBlockingWaitSeesTheSameEnd() throws {
        let (child, cue) = try start("read x; kill -USR1 $$")
        #expect(child.waitForExit(by: .now + .milliseconds(50)) == nil)
        close(cue)
        #expect(child.waitForExit(by: .now + .seconds(10)) == .signaled(SIGUSR1))
        #expect(isGone(child.pid))
    }

    @Test func collectKeepsOutputAndTheStartOfErrorsAndTheStatus() async throws {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        #expect(pipe(&out) == 0 && pipe(&err) == 0)
        for fd in [out[0], err[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var spawn = Spawn(.path("/bin/sh"), arguments: ["sh", "-c", "head -c 3000 /dev/zero | tr '\\0' e >&2; echo out; exit 3"])
        (spawn.standardOutput, spawn.standardError) = (out[1], err[1])
        let child = try spawn.start()
        close(out[1]); close(err[1])
        let run = await child.collect(output: out[0], errors: err[0], outputLimit: 100, errorLimit: 1000, by: .now + .seconds(10))
        #expect(String(decoding: run.output, as: UTF8.self) == "out\n")
        #expect(run.errors.count == 1000)
        #expect(run.ending == .exited(3) && !run.timedOut && !run.outputTooLarge)
        #expect(isGone(child.pid))
    }

    @Test func collectKillsAChildPastItsDeadlineOrItsOutputLimit() async throws {
        for (script, limit) in [("exec sleep 60", 100), ("exec cat /dev/zero", 4096)] {
            var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
            #expect(pipe(&out) == 0 && pipe(&err) == 0)
            for fd in [out[0], err[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            var spawn = Spawn(.path("/bin/sh"), arguments: ["sh", "-c", script])
            (spawn.standardOutput, spawn.standardError) = (out[1], err[1])
            let child = try spawn.start()
            close(out[1]); close(err[1])
            let run = child.collectWaiting(output: out[0], errors: err[0], outputLimit: limit, by: .now + .milliseconds(300))
            #expect(run.timedOut == (script.contains("sleep")) && run.outputTooLarge == (script.contains("cat")), "\(script)")
            #expect(run.ending == .signaled(SIGKILL), "\(script)")
            #expect(isGone(child.pid), "\(script)")
        }
    }

    @Test func stopSendsTermThenKillToTheGroupAfterTheGrace() async throws {
        let (polite, politeCue) = try start("read x", group: true)
        defer { close(politeCue) }
        #expect(await polite.stop(grace: .seconds(10)) == .signaled(SIGTERM))
        // Ignores SIGTERM, and so does what it started: SIGKILL reaches both.
        // It says when its trap is set, on a pipe: the SIGTERM must come after.
        var ready: [Int32] = [-1, -1]
        #expect(pipe(&ready) == 0)
        _ = fcntl(ready[0], F_SETFD, FD_CLOEXEC)
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var spawn = Spawn(.path("/bin/sh"), arguments: ["sh", "-c", "trap '' TERM; sleep 60 & echo ready; read x"])
        (spawn.standardInput, spawn.standardOutput, spawn.newProcessGroup) = (ends[0], ready[1], true)
        let stubborn = try spawn.start()
        close(ends[0]); close(ready[1])
        defer { close(ends[1]); close(ready[0]) }
        var byte: UInt8 = 0
        #expect(read(ready[0], &byte, 1) == 1)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(await stubborn.stop(grace: .milliseconds(200)) == .signaled(SIGKILL))
        #expect(clock.now - started >= .milliseconds(200))
        // What it started is gone too, once its new parent has reaped it.
        let deadline = ContinuousClock.now + .seconds(10)
        while stubborn.groupAlive, ContinuousClock.now < deadline { usleep(10_000) }
        #expect(!stubborn.groupAlive)
        #expect(isGone(stubborn.pid))
    }
}
