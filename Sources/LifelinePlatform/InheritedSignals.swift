import Glibc

/// What a process must not keep of the signal dispositions it inherited.
public enum InheritedSignals {
    /// Sets SIGCHLD back to its default action. Called first thing by every
    /// Lifeline program, before it starts any child.
    ///
    /// A parent that ignores SIGCHLD (some supervisors and job runners do) passes
    /// that on through exec, and with SIGCHLD ignored the kernel reaps children
    /// on its own and sends no SIGCHLD: `waitpid` then fails with ECHILD, and a
    /// wait for a child's end never sees it. Unlike nohup's SIGHUP this is no
    /// choice the user made for the command, so it is not carried through.
    public static func resetChildSignal() {
        signal(SIGCHLD, SIG_DFL)
    }
}
