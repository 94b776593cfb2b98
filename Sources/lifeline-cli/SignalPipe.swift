import Glibc
import LifelineCore
import LifelinePlatform

/// SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGCHLD turned into bytes on a pipe
/// that a `poll` loop waits on beside the D-Bus socket (the self-pipe trick). A
/// handler rather than a blocked mask and signalfd: the Swift runtime runs
/// threads of its own, and a signal blocked on one thread would still kill the
/// process on another.
///
/// A signal that was ignored when `lifeline` started (`nohup`, a shell's
/// background job) stays ignored, here and in the command it runs
/// (`ignoredAtStart`), as a shell would do. SIGCHLD is the exception: without
/// its handler no command's end would ever be seen, so it is always handled.
enum SignalPipe {
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private(set) static var readEnd: Int32 = -1
    /// The signals ignored when the process started, before any handler.
    nonisolated(unsafe) private(set) static var ignoredAtStart = sigset_t()

    /// Added to a signal's number when a process sent it (`kill`), rather than
    /// the terminal (Ctrl-C, a hang-up), which sends it to the command's whole
    /// process group, the command included.
    static let sentByProcess: Int32 = 0x80

    /// Installs the handlers once; the read end is non-blocking.
    static func install() {
        guard readEnd < 0 else { return }
        ignoredAtStart = Spawn.ignoredSignals()
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        sigdelset(&ignoredAtStart, SIGCHLD)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] where sigismember(&ignoredAtStart, signal) != 1 {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { number, info, _ in
                let saved = errno
                // si_code > 0: from the kernel (the terminal, a child's end); else from kill().
                let byProcess = (info?.pointee.si_code ?? 0) <= 0 && number != SIGCHLD
                var byte = UInt8(truncatingIfNeeded: number | (byProcess ? SignalPipe.sentByProcess : 0))
                _ = write(SignalPipe.writeEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// The signals that arrived since the last call, oldest first (with
    /// `sentByProcess` added when a process sent them).
    static func drain() -> [Int32] {
        var out: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += buffer[0..<n].map { Int32($0) }
        }
    }
}
