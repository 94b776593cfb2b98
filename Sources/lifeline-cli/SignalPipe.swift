import Glibc

/// SIGINT, SIGTERM and SIGCHLD turned into bytes on a pipe that a `poll` loop
/// waits on beside the D-Bus socket (the self-pipe trick). A handler rather
/// than a blocked mask and signalfd: the Swift runtime runs threads of its own,
/// and a signal blocked on one thread would still kill the process on another.
/// Handlers do not survive exec, so a command started later gets the
/// dispositions the user gave `lifeline`.
enum SignalPipe {
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private(set) static var readEnd: Int32 = -1

    /// Installs the handlers once; the read end is non-blocking.
    static func install() {
        guard readEnd < 0 else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        for signal in [SIGINT, SIGTERM, SIGCHLD] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalPipe.writeEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// The signals that arrived since the last call, oldest first.
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
