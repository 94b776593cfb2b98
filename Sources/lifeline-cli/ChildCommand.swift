import Glibc
import LifelineCore
import LifelinePlatform

/// The user's command, started with `Spawn` (argv as given, looked up in
/// PATH, no shell) on the user's own standard input, output and error, in
/// `lifeline`'s process group: it stays in the terminal's foreground, so it can
/// read the terminal and Ctrl-C reaches it as it would without `lifeline`.
struct ChildCommand {
    let child: Child

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
            return ChildCommand(child: try spawn.start())
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// How a command ended.
    enum Ending: Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// Signal N killed it.
        case killed(Int32)

        /// As a shell reports it: 128 + N for a death by signal N.
        var status: Int32 {
            switch self {
            case .exited(let code): code
            case .killed(let signal): 128 + signal
            }
        }
    }

    /// How it ended, once it has (reaped); nil while it runs. The SIGCHLD
    /// that comes through `SignalPipe` says when to look.
    func ending() -> Ending? {
        switch child.ending() {
        case nil: nil
        case .exited(let code): .exited(code)
        case .signaled(let signal): .killed(signal)
        }
    }

    func send(_ signal: Int32) { child.signal(signal) }

    /// Waits for the command alone (no daemon to listen to), passing on the
    /// signals sent to `lifeline`; how it ended.
    func waitPassingSignals() -> Ending {
        while true {
            if let ending = ending() { return ending }
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

    /// Makes `lifeline` die of `signal`, the signal its command died of, as
    /// timeout(1) does: a shell stops a script on Ctrl-C only when its
    /// foreground child died of SIGINT, and takes an exit status of 130 to mean
    /// the child handled it, so the script goes on.
    static func die(of signal: Int32) -> Never {
        // The command dumped core or chose not to: lifeline leaves no core of its own.
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = withUnsafePointer(to: &none) { setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), $0) }
        Glibc.signal(signal, SIG_DFL)
        // This thread may block it (the async runtime's threads block several).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(signal)
        // Still here: the status a shell reports for a death by that signal.
        ProcessEnd.now(128 + signal)
    }
}
