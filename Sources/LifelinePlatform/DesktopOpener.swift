import Glibc

/// `xdg-open ARGUMENT`: the desktop's own handler (the default browser for a
/// URL, the viewer for a file), found on `PATH`, started straight from its
/// argument list (no shell sees the argument) with nothing of the daemon's on
/// its standard streams. Never waited for (a browser may stay open for hours),
/// and reaped in the background so it leaves no zombie.
public enum DesktopOpener {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts the opener; throws when it cannot start (not installed).
    public static func open(_ argument: String, opener: String = "xdg-open") throws(Failure) {
        let input = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC), output = Glibc.open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { for fd in [input, output] where fd >= 0 { close(fd) } }
        var spawn = Spawn(.searched(opener), arguments: [opener, argument])
        (spawn.standardInput, spawn.standardOutput, spawn.standardError) = (input, output, output)
        // A group of its own: a signal meant for the daemon's group is not its.
        spawn.newProcessGroup = true
        let pid: pid_t
        do throws(Spawn.Failure) { pid = try spawn.start() } catch {
            throw Failure(description: "\(opener): \(String(cString: strerror(error.code)))")
        }
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
