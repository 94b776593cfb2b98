import Glibc
import Synchronization

/// Says when a folder's entries change: a socket created (a tmux server, a
/// bus started), renamed or gone. inotify on a thread of its own, blocked in
/// `poll` while nothing happens, so a change is seen at once and an idle
/// daemon is never woken. Until the folder exists (no tmux server has run yet,
/// no system bus) its parent is watched for it instead.
///
/// Attribute changes are not watched: tmux changes its socket's mode whenever a
/// client attaches or detaches, which says nothing about which sockets exist.
public final class FolderWatch: @unchecked Sendable {
    public let directory: String
    private let onChange: @Sendable () -> Void
    private let inotify: Int32
    /// A pipe: `stop` writes to it to end the thread.
    private let stopReader: Int32
    private let stopWriter: Int32
    /// Set (under the lock) by the thread before it closes the descriptors, so
    /// `stop` never writes to a descriptor number that may be reused by then.
    private let ended = Mutex(false)

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Calls `onChange` (on the watch's thread, named `threadName`) once the
    /// folder is watched, and after every change to its entries.
    public init(directory: String, threadName: String, onChange: @escaping @Sendable () -> Void) throws(Failure) {
        self.directory = directory
        self.onChange = onChange
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw Failure(description: "inotify: \(String(cString: strerror(errno)))") }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let reason = String(cString: strerror(errno))
            close(inotify)
            throw Failure(description: "pipe: \(reason)")
        }
        stopReader = ends[0]
        stopWriter = ends[1]
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // not for the processes the daemon starts
        }
        // The thread runs the watch until `stop`, then ends.
        let thread = SerialThread(name: threadName)
        defer { thread.stop() }
        guard thread.perform({ self.run() }) else {
            close(inotify)
            close(stopReader)
            close(stopWriter)
            throw Failure(description: "cannot start a thread to watch \(directory)")
        }
    }

    /// Ends the thread soon; `onChange` may run once more meanwhile.
    public func stop() {
        ended.withLock { ended in
            guard !ended else { return }
            var byte: UInt8 = 1
            _ = write(stopWriter, &byte, 1)
        }
    }

    private static let folderEvents = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
                                              | IN_MOVE_SELF | IN_ONLYDIR)
    private static let parentEvents = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

    private func run() {
        defer {
            ended.withLock { ended in
                ended = true
                close(inotify)
                close(stopReader)
                close(stopWriter)
            }
        }
        let parent = Files.directory(of: directory)
        let name = String(directory[directory.index(after: directory.lastIndex(of: "/") ?? directory.startIndex)...])
        var folder: Int32 = -1
        var parentWatch: Int32 = -1

        /// Watches the folder when it exists (and says so: servers may have
        /// started before the watch), else its parent, waiting for it.
        func arm() {
            guard folder < 0 else { return }
            folder = inotify_add_watch(inotify, directory, Self.folderEvents)
            if folder >= 0 {
                if parentWatch >= 0 { inotify_rm_watch(inotify, parentWatch) }
                parentWatch = -1
                onChange()
            } else if parentWatch < 0 {
                parentWatch = inotify_add_watch(inotify, parent, Self.parentEvents)
            }
        }
        arm()

        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopReader, events: Int16(POLLIN), revents: 0)]
            // With nothing to watch (not even the parent exists), look again now and then.
            let ready = poll(&fds, 2, folder < 0 && parentWatch < 0 ? 5000 : -1)
            if ready < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { return }
            var changed = false
            if fds[0].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                if n < 0 && errno != EAGAIN && errno != EINTR { return }
                for event in InotifyEvents(bytes: buffer[0..<max(n, 0)]) {
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        changed = true  // events were lost: look at everything again
                    } else if event.watch == folder {
                        changed = true
                        if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                            // The folder went away (or was moved): wait for a new one.
                            inotify_rm_watch(inotify, folder)
                            folder = -1
                        }
                    } else if event.watch == parentWatch, event.name != name {
                        continue  // something else appeared beside the folder
                    }
                }
            }
            arm()
            if changed { onChange() }
        }
    }
}

extension FolderWatch {
    /// Returns once `path` exists: at once if it does, else as soon as it is
    /// created (inotify on its folder, so nothing wakes the caller meanwhile),
    /// or when the calling task is cancelled. Where the folder cannot be
    /// watched (the user's inotify instances are used up), it returns after
    /// `fallback` instead, for the caller to look again.
    public static func waitUntilExists(_ path: String, threadName: String, fallback: Duration) async {
        guard access(path, F_OK) != 0 else { return }
        let (changes, change) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let watch: FolderWatch
        do {
            // The watch calls once it is armed: a file created before that is seen then.
            watch = try FolderWatch(directory: Files.directory(of: path), threadName: threadName) { change.yield() }
        } catch {
            try? await Task.sleep(for: fallback)
            return
        }
        defer { watch.stop() }
        for await _ in changes where access(path, F_OK) == 0 { return }
    }
}
