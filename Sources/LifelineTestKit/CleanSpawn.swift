import CProcess
import Glibc

/// Attributes for `posix_spawn` that start a child clean: no signal blocked and
/// every signal at its default action. A child inherits its parent's signal
/// mask and ignored signals across exec; the daemon's threads block signals
/// for themselves, and a child started with that mask would shrug off the
/// SIGTERM that is meant to stop it (a hook at its timeout, a monitor on
/// reload), or keep ignoring SIGPIPE in a pipeline.
public enum CleanSpawn {
    /// Initialised attributes; the caller destroys them
    /// (`defer { posix_spawnattr_destroy(&attributes) }`). `newProcessGroup`
    /// puts the child at the head of a group of its own, so one `kill(-pid, …)`
    /// reaches whatever it starts too.
    public static func attributes(newProcessGroup: Bool = false) -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        return attributes
    }

    /// Adds "close every descriptor from 3 up" to `actions`, after the
    /// descriptors the child is meant to have were placed at 0, 1 and 2. What
    /// the daemon holds open without close-on-exec (what it inherited from
    /// whatever started it, a library's descriptor) then stays with the
    /// daemon: a hook or tmux command that kept the write end of someone's
    /// pipe would hold that reader waiting for an end of file forever.
    public static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        _ = posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    }
}
