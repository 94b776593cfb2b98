import Glibc

/// `xdg-open ARGUMENT`: the desktop's own handler (the default browser for a
/// URL, the viewer for a file), found on `PATH`, started straight from its
/// argument list (no shell sees the argument) with nothing of the daemon's on
/// its standard streams. Nobody waits for it to finish (a browser may stay
/// open for hours): a task awaits its exit through its pidfd, which wakes
/// nothing until it ends, and reaps it then so it leaves no zombie.
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
        let child: Child
        do throws(Spawn.Failure) { child = try spawn.start() } catch {
            throw Failure(description: "\(opener): \(String(cString: strerror(error.code)))")
        }
        Task { _ = await child.exit() }
    }
}
