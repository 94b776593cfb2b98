import Glibc
import LifelineCore
import LifelineProtocol

/// A source of state changes for `lifeline watch`, kept apart from the rendering
/// (`WatchFormat`) so the D-Bus signal and the state file can both drive it.
protocol WatchSource {
    /// Calls `deliver` with the current state at once (nil: no daemon runs), then
    /// again whenever it may have changed, until the process ends. Repeated states
    /// are fine: the caller prints only lines that differ.
    func run(_ deliver: (StateEvent?) -> Void) throws
}

/// Changes seen through the runtime state file: inotify on its folder, because the
/// daemon replaces the file by rename (a watch on the file itself would stay on
/// the old inode). One blocking `poll` loop, no wake-ups while nothing changes but
/// one every few seconds to notice a daemon that died without removing its file.
struct StateFileSource: WatchSource {
    let path: String
    var livenessInterval: Int32 = 3000  // ms

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func run(_ deliver: (StateEvent?) -> Void) throws {
        let folder = Files.directory(of: path)
        let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { throw Failure(description: "inotify: \(String(cString: strerror(errno)))") }
        defer { close(fd) }

        var watching = false
        func watch() {
            // The daemon creates the folder too; making it here lets `watch` start first.
            try? Files.makeDirectories(folder)
            let mask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
            watching = inotify_add_watch(fd, folder, mask) >= 0
        }
        watch()

        var pid: Int32?
        func refresh() {
            let current = CurrentState.read(path: path)
            pid = current?.pid
            deliver(current?.event)
        }
        refresh()

        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, watching ? livenessInterval : 1000)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 {
                if !watching {
                    watch()
                    refresh()
                } else if let known = pid, kill(known, 0) != 0, errno == ESRCH {
                    refresh()  // the daemon died without removing its file
                }
                continue
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(description: "inotify read: \(String(cString: strerror(errno)))")
            }
            var relevant = false
            for event in InotifyEvents(bytes: buffer[0..<n]) {
                if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW) != 0 {
                    // Folder gone (or events lost): watch it again and re-read.
                    if event.mask & UInt32(IN_Q_OVERFLOW) == 0 {
                        watching = false
                    }
                    relevant = true
                } else if event.name == name {
                    relevant = true
                }
            }
            if !watching { watch() }
            if relevant { refresh() }
        }
    }
}
