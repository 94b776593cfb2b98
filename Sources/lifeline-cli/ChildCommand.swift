import Glibc
import LifelineCore
import LifelinePlatform

/// The user's command, started with `Spawn` (argv as given, looked up in
/// PATH, no shell) on the user's own standard input, output and error, in
/// `lifeline`'s process group: it stays in the terminal's foreground, so it can
/// read the terminal and Ctrl-C reaches it as it would without `lifeline`.
struct ChildCommand {
    let pid: pid_t

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func start(_ argv: [String]) throws(Failure) -> ChildCommand {
        // Whatever this process blocks, or handles, is not the command's
        // business; what was ignored when lifeline started (nohup) stays ignored.
        var spawn = Spawn(.searched(argv[0]), arguments: argv)
        spawn.keepIgnored = SignalPipe.ignoredAtStart
        // Descriptors the user opened for the command (`3<input`) reach it;
        // lifeline's own (the bus socket, the signal pipe) are close-on-exec.
        spawn.closeOtherDescriptors = false
        do {
            return ChildCommand(pid: try spawn.start())
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// The exit status once it has ended (128 + N when killed by signal N, as a
    /// shell reports it); nil while it runs.
    func exitStatus() -> Int32? {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == 0 { return nil }
            if r < 0 {
                if errno == EINTR { continue }
                return 1
            }
            break
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    func send(_ signal: Int32) { _ = kill(pid, signal) }

    /// Waits for the command alone (no daemon to listen to), passing on the
    /// signals sent to `lifeline`; its exit status.
    func waitPassingSignals() -> Int32 {
        while true {
            if let status = exitStatus() { return status }
            var p = pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, -1)
            for raw in SignalPipe.drain() { pass(raw) }
        }
    }

    /// Passes on a signal sent to `lifeline` by a process (`kill -TERM`); one
    /// from the terminal reached the command already (the same process group),
    /// and SIGCHLD is ours.
    func pass(_ raw: Int32) {
        guard raw & SignalPipe.sentByProcess != 0 else { return }
        send(raw & ~SignalPipe.sentByProcess)
    }

    /// Whether `status` (as `exitStatus` gives it) says the command died of SIGINT.
    static func diedOfInterrupt(_ status: Int32) -> Bool { status == 128 + SIGINT }
}
