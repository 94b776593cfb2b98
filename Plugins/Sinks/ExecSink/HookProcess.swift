import Glibc
import LifelineCore
import LifelinePlatform

/// One run of a hook: started with `Spawn` from the descriptor that was checked (argv, never a shell) in a
/// process group of its own, the event on its standard input, its standard
/// output and error in one pipe that the daemon reads. `wait` blocks, so it runs
/// on its lane's thread (`HookLanes`), which sleeps in one `poll` on the pipe
/// and the hook's pidfd (`Child`).
final class HookProcess: @unchecked Sendable {
    // @unchecked: used by one thread at a time (started by the dispatcher, then
    // handed to the hook's lane).
    let child: Child
    var pid: pid_t { child.pid }
    /// The hook as its folder lists it, for log lines (what runs is the file
    /// opened and checked, symbolic links resolved).
    let path: String
    private var output: Int32

    struct StartFailed: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "hook \(path) cannot start: \(reason)" }
    }

    /// How a run ended.
    enum Outcome: Equatable {
        case exited(Int32)
        case signaled(Int32)
        /// Still running at its timeout: SIGTERM to its process group, then
        /// SIGKILL when `killed`.
        case timedOut(killed: Bool)
        /// Still running when the sink stopped (shutdown, reload): stopped the same way.
        case stopped(killed: Bool)

        init(_ ending: Child.Ending) {
            self = switch ending {
            case .exited(let code): .exited(code)
            case .signaled(let signal): .signaled(signal)
            }
        }
    }

    /// A script's checked descriptor, which its interpreter reads through
    /// `/proc/<daemon>/fd/N`; held until the hook ends. -1 for a compiled program.
    private let script: Int32

    /// The link that names a script for its interpreter, removed when the hook ends.
    private let scriptLink: String?

    /// Starts `hook`; its descriptor is the process's from here on.
    /// `linkFolder`: a folder only the daemon's user can write, where a script
    /// gets a link under its own name to the daemon's descriptor, so that its
    /// `$0` still ends in the hook's name.
    init(path: String, hook: OpenedHook, arguments: [String], environment: [String], input: [UInt8],
         linkFolder: String? = nil) throws(StartFailed) {
        self.path = path
        script = hook.interpreter == nil ? -1 : hook.descriptor
        let descriptorPath = "/proc/\(getpid())/fd/\(hook.descriptor)"
        scriptLink = hook.interpreter == nil ? nil : linkFolder.flatMap { Self.link(descriptorPath, in: $0, named: path) }
        var running = false
        // A program's descriptor is done with once it runs; a script's, once it ends.
        defer { if hook.interpreter == nil || !running { hook.close() } }
        func failure(_ what: String, _ code: Int32) -> StartFailed {
            StartFailed(path: path, reason: "\(what): \(String(cString: strerror(code)))")
        }
        var stdinPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        guard Self.makePipe(&stdinPipe) else { throw failure("pipe", errno) }
        guard Self.makePipe(&outPipe) else {
            close(stdinPipe[0]); close(stdinPipe[1])
            throw failure("pipe", errno)
        }
        // The event is a few hundred bytes and the pipe holds 64 KiB: written
        // before the hook starts, it never waits for the hook to read it.
        _ = fcntl(stdinPipe[1], F_SETFL, O_NONBLOCK)
        _ = input.withUnsafeBytes { write(stdinPipe[1], $0.baseAddress, $0.count) }
        close(stdinPipe[1])

        // The file that was checked runs, from its descriptor. A program runs
        // by `execveat` on it. A script's interpreter reads it through the
        // daemon's own descriptor, so the hook holds nothing of the daemon's
        // above 2 (the kernel would leave it at /dev/fd/N in the hook).
        var spawn: Spawn
        if let interpreter = hook.interpreter {
            spawn = Spawn(.path(interpreter[0]), arguments: interpreter + [scriptLink ?? descriptorPath] + arguments,
                          environment: environment)
        } else {
            spawn = Spawn(.descriptor(hook.descriptor), arguments: [hook.target] + arguments, environment: environment)
        }
        // A group of its own: the timeout stops the hook and whatever it started.
        spawn.standardInput = stdinPipe[0]
        spawn.standardOutput = outPipe[1]
        spawn.standardError = outPipe[1]
        spawn.newProcessGroup = true
        let started = Result { () throws(Spawn.Failure) -> Child in try spawn.start() }
        close(stdinPipe[0])
        close(outPipe[1])
        switch started {
        case .success(let child):
            self.child = child
            output = outPipe[0]
            running = true
        case .failure(let failed):
            close(outPipe[0])
            throw failure("cannot run \(hook.target)", failed.code)
        }
    }

    deinit {
        if output >= 0 { close(output) }
        if script >= 0 { close(script) }
        if let scriptLink { unlink(scriptLink) }
    }

    /// `folder/NAME` (NAME: the hook's file name) as a symbolic link to
    /// `target`, replacing one left by an earlier run; nil when it cannot be made.
    private static func link(_ target: String, in folder: String, named hookPath: String) -> String? {
        let name = hookPath.split(separator: "/").last.map(String.init) ?? "hook"
        let link = folder + "/" + name, fresh = link + ".new"
        unlink(fresh)
        guard symlink(target, fresh) == 0 else { return nil }
        guard rename(fresh, link) == 0 else {
            unlink(fresh)
            return nil
        }
        return link
    }

    /// A pipe whose ends no other child inherits (`pipe2` is not visible from
    /// Swift here; the moment between the two calls is the only gap).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Reads the hook's output into `lines` until the hook ends, stopping it
    /// when it runs past `timeout` or when `stopRequested()` turns true: SIGTERM
    /// to its process group, SIGKILL `killAfter` later. `stopNotice`: a
    /// descriptor that turns readable when the stop is asked for, so the wait
    /// wakes for it (-1: none, and the stop is looked for every 100 ms). Blocks.
    func wait(timeout: Duration, killAfter: Duration = .seconds(2), stopRequested: () -> Bool, stopNotice: Int32 = -1,
              lines: (String) -> Void) -> (outcome: Outcome, output: HookOutput) {
        let clock = ContinuousClock()
        let started = clock.now
        var capture = HookOutput()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var ending: Child.Ending?
        var termSent: ContinuousClock.Instant?
        var killed = false
        var timedOut = false
        while true {
            if ending == nil { ending = child.ending() }
            if ending != nil, let sent = termSent, !killed, child.groupAlive {
                // The leader is gone but what it started may ignore SIGTERM: the
                // group still gets its SIGKILL when the grace is over.
                // No descriptor tells when a group empties: looked at every 10-50 ms
                // for the grace's 2 s at most.
                if clock.now - sent >= killAfter {
                    child.signal(SIGKILL)
                    killed = true
                } else if output >= 0 {
                    _ = read(buffer: &buffer, capture: &capture, lines: lines, waitMs: 50)
                } else {
                    usleep(10_000)
                }
                continue
            }
            if let ending {
                // Take what is already in the pipe; a child the hook left behind may
                // hold it open, and is not waited for.
                if output >= 0 { _ = read(buffer: &buffer, capture: &capture, lines: lines, waitMs: 0) }
                if let last = capture.finish() { lines(last) }
                let outcome: Outcome = termSent == nil
                    ? Outcome(ending)
                    : timedOut ? .timedOut(killed: killed) : .stopped(killed: killed)
                return (outcome, capture)
            }
            let now = clock.now
            if termSent == nil, now - started >= timeout || stopRequested() {
                timedOut = now - started >= timeout
                child.signal(SIGTERM)
                termSent = now
            } else if let sent = termSent, !killed, now - sent >= killAfter {
                child.signal(SIGKILL)
                killed = true
            }
            // Wakes at once on output, on the hook's end (its pidfd) or on the
            // sink's stop (its notice, until the stop is under way), else at
            // the next deadline.
            var next = termSent.map { $0 + killAfter } ?? started + timeout
            if stopNotice < 0 { next = min(next, now + .milliseconds(100)) }
            if child.waitForExit(orReadable: output, orWoken: termSent == nil ? stopNotice : -1, by: next) {
                _ = read(buffer: &buffer, capture: &capture, lines: lines, waitMs: 0)
            }
        }
    }

    /// One poll and, when there is something, one read. Closes the pipe at its end.
    private func read(buffer: inout [UInt8], capture: inout HookOutput, lines: (String) -> Void, waitMs: Int32) -> Bool {
        var fds = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let ready = poll(&fds, 1, waitMs)
        guard ready > 0 else { return false }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
        if count > 0 {
            buffer.withUnsafeBytes { raw in
                for line in capture.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { lines(line) }
            }
            return true
        }
        if count == 0 || (errno != EINTR && errno != EAGAIN) {
            close(output)
            output = -1
        }
        return false
    }
}
