import CProcess
import Glibc
import LifelineCore
import LifelinePlatform

/// Follows the runtime state file for `lifeline watch`, without waking while
/// nothing changes.
///
/// - Changes: inotify on the folder, because the daemon replaces the file by
///   rename (a watch on the file itself would stay on the old inode).
/// - A daemon that dies without removing its file (SIGKILL, a crash): a pidfd
///   of the daemon that wrote the file polls readable when it exits. Kernels
///   without pidfds (before 5.3) get a check every few seconds instead.
/// - A folder that cannot be watched yet (no runtime folder): retried each second.
public struct StateFileWatch: Sendable {
    public let path: String
    /// How often a daemon's liveness is checked where pidfds are missing (ms).
    public var livenessInterval: Int32 = 3000

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init(path: String) {
        self.path = path
    }

    /// Calls `deliver` with the current state at once (nil: no daemon runs), then
    /// again whenever it may have changed, until `deliver` returns false.
    /// Repeated states are fine: the caller prints only lines that differ.
    /// `refreshAfterMs` says when to call again although nothing changed (a line
    /// that shows a duration); nil: only on changes.
    public func run(
        refreshAfterMs: (StateEvent?) -> Int32? = { _ in nil },
        _ deliver: (StateEvent?) -> Bool
    ) throws {
        let folder = Files.directory(of: path)
        let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0 else { throw Failure(description: "inotify: \(String(cString: strerror(errno)))") }
        defer { close(inotify) }

        var watching = false
        func watch() {
            // The daemon creates the folder too; making it here lets `watch` start first.
            try? Files.makeDirectories(folder)
            let mask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
            watching = inotify_add_watch(inotify, folder, mask) >= 0
        }
        watch()

        var daemon = DaemonHandle()
        defer { daemon.close() }
        var shown: StateEvent?
        func refresh() -> Bool {
            var current = CurrentState.read(path: path)
            // An exited daemon stays a zombie (and answers kill(pid, 0)) until reaped.
            if let pid = current?.pid, daemon.hasExited(pid) { current = nil }
            daemon.follow(current?.pid)
            shown = current?.event
            return deliver(shown)
        }
        guard refresh() else { return }

        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            if daemon.fd >= 0 { fds.append(pollfd(fd: daemon.fd, events: Int16(POLLIN), revents: 0)) }
            var timeout = refreshAfterMs(shown) ?? -1
            if !watching { timeout = Self.sooner(timeout, 1000) }
            if daemon.needsChecking { timeout = Self.sooner(timeout, livenessInterval) }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 {
                // A duration to redraw, a folder to watch again, a daemon to look at.
                if !watching { watch() }
                guard refresh() else { return }
                continue
            }
            var relevant = false
            if fds.count > 1, fds[1].revents != 0 {
                daemon.markExited()
                relevant = true
            }
            if fds[0].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                if n < 0, errno != EINTR, errno != EAGAIN {
                    throw Failure(description: "inotify read: \(String(cString: strerror(errno)))")
                }
                for event in InotifyEvents(bytes: buffer[0..<max(n, 0)]) {
                    if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW) != 0 {
                        // Folder gone (or events lost): watch it again and re-read.
                        if event.mask & UInt32(IN_Q_OVERFLOW) == 0 { watching = false }
                        relevant = true
                    } else if event.name == name {
                        relevant = true
                    }
                }
            }
            if !watching { watch() }
            if relevant { guard refresh() else { return } }
        }
    }

    /// The shorter of two poll timeouts (-1: none).
    static func sooner(_ a: Int32, _ b: Int32) -> Int32 {
        a < 0 ? b : min(a, b)
    }
}

/// The daemon that wrote the state file being shown: a pidfd to poll, or, where
/// the kernel has none, a pid to look at now and then.
private struct DaemonHandle {
    private(set) var fd: Int32 = -1
    private var pid: Int32?
    private var exitedPID: Int32?

    /// True when only a periodic look can tell that the daemon died.
    var needsChecking: Bool { pid != nil && fd < 0 }

    mutating func follow(_ newPID: Int32?) {
        guard newPID != pid else { return }
        close()
        pid = newPID
        if let newPID { fd = lifeline_pidfd_open(newPID) }
    }

    func hasExited(_ candidate: Int32) -> Bool { candidate == exitedPID }

    mutating func markExited() {
        let gone = pid
        close()
        exitedPID = gone
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        pid = nil
    }
}
