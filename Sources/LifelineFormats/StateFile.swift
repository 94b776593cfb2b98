import Glibc
import LifelineCore

/// The runtime state file `$XDG_RUNTIME_DIR/lifeline/state.json`: the current
/// state with every field of an event plus the daemon's pid, replaced atomically
/// on every change. `lifeline status` reads it first (the fastest way to the
/// event D-Bus carries); the pid tells a live daemon from a file left behind by a crash.
public enum StateFile {
    public static func render(_ update: Update, pid: Int32 = getpid()) -> String {
        JSONText.object(update.event, extra: [("pid", String(pid)), ("muted_until", String(update.mutedUntil))]) + "\n"
    }
}
