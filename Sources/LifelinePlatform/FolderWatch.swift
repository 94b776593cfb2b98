import Glibc

/// Says when a folder's entries change: a socket created (a tmux server, a
/// bus started), renamed or gone. The watch is inotify, and its descriptor is
/// waited for like any other (`DescriptorWaiting`: in the daemon, the
/// executor's epoll set), so a change is seen at once, no thread of its own
/// waits for it, and an idle daemon is never woken. Until the folder exists (no
/// tmux server has run yet, no system bus) its parent is watched for it instead.
///
/// Attribute changes are not watched: tmux changes its socket's mode whenever a
/// client attaches or detaches, which says nothing about which sockets exist.
public final class FolderWatch: Sendable {
    public let directory: String
    private let watching: Task<Void, Never>

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Calls `onChange` once the folder is watched, and after every change to
    /// its entries, from the watch's task.
    public init(directory: String, onChange: @escaping @Sendable () -> Void) throws(Failure) {
        self.directory = directory
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw Failure(description: "inotify: \(String(cString: strerror(errno)))") }
        // The task owns the descriptor and closes it when it ends: `stop`
        // cancels the wait first, so no wait is left on a closed number.
        watching = Task {
            await Self.watch(directory, inotify: inotify, onChange: onChange)
            close(inotify)
        }
    }

    /// Ends the watch soon; `onChange` may run once more meanwhile.
    public func stop() {
        watching.cancel()
    }

    private static let folderEvents = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
                                              | IN_MOVE_SELF | IN_ONLYDIR)
    private static let parentEvents = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

    private static func watch(_ directory: String, inotify: Int32, onChange: @Sendable () -> Void) async {
        let parent = Files.directory(of: directory)
        let name = String(directory[directory.index(after: directory.lastIndex(of: "/") ?? directory.startIndex)...])
        var folder: Int32 = -1
        var parentWatch: Int32 = -1

        /// Watches the folder when it exists (and says so: servers may have
        /// started before the watch), else its parent, waiting for it.
        func arm() {
            guard folder < 0 else { return }
            folder = inotify_add_watch(inotify, directory, folderEvents)
            if folder >= 0 {
                if parentWatch >= 0 { inotify_rm_watch(inotify, parentWatch) }
                parentWatch = -1
                onChange()
            } else if parentWatch < 0 {
                parentWatch = inotify_add_watch(inotify, parent, parentEvents)
            }
        }
        arm()

        var buffer = [UInt8](repeating: 0, count: 4096)
        while !Task.isCancelled {
            // With nothing to watch (not even the parent exists), look again now
            // and then; else wait for an event (a day at a time).
            let nothingWatched = folder < 0 && parentWatch < 0
            let until = ContinuousClock.now + (nothingWatched ? .seconds(5) : .seconds(86400))
            switch await DescriptorWaiting.current.wait(for: inotify, events: Int16(POLLIN), until: until) {
            case .cancelled: return
            case .timedOut:
                arm()
                continue
            case .ready: break
            }
            var changed = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN { break }
                    return
                }
                if n == 0 { break }
                for event in InotifyEvents(bytes: buffer[0..<n]) {
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
    public static func waitUntilExists(_ path: String, fallback: Duration) async {
        guard access(path, F_OK) != 0 else { return }
        let (changes, change) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let watch: FolderWatch
        do {
            // The watch calls once it is armed: a file created before that is seen then.
            watch = try FolderWatch(directory: Files.directory(of: path)) { change.yield() }
        } catch {
            try? await Task.sleep(for: fallback)
            return
        }
        defer { watch.stop() }
        for await _ in changes where access(path, F_OK) == 0 { return }
    }
}
