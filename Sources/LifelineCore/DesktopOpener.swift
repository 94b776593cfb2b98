import Glibc

/// `xdg-open ARGUMENT`: the desktop's own handler (the default browser for a
/// URL), found on `PATH`, started straight from its argument list (no shell
/// sees the argument) with nothing of the daemon's on its standard streams.
/// Never waited for (a browser may stay open for hours), and reaped in the
/// background so it leaves no zombie.
public enum DesktopOpener {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts the opener; throws when it cannot start (not installed).
    public static func open(_ argument: String, opener: String = "xdg-open") throws(Failure) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        CleanSpawn.closeOtherDescriptors(&actions)
        // A group of its own: a signal meant for the daemon's group is not its.
        var attributes = CleanSpawn.attributes(newProcessGroup: true)
        defer { posix_spawnattr_destroy(&attributes) }
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(opener), strdup(argument), nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, opener, &actions, &attributes, arguments, environ)
        guard rc == 0 else { throw Failure(description: "\(opener): \(String(cString: strerror(rc)))") }
        Task { await reap(pid) }
    }

    /// Waits for `pid` without holding a thread: a look every so often, less
    /// often the longer it runs.
    private static func reap(_ pid: pid_t) async {
        var wait = Duration.milliseconds(20)
        while true {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno != EINTR) { return }
            try? await Task.sleep(for: wait)
            wait = min(wait * 2, .seconds(5))
        }
    }
}
