// The one way Lifeline starts a child process. Written in C because what runs
// between vfork and exec must be async-signal-safe: no allocation, no lock, no
// Swift runtime. posix_spawn cannot do three of the things needed here: set
// the parent-death signal, execute an already opened descriptor, and keep
// exactly the signals that were ignored at start while resetting the rest.
#ifndef LIFELINE_CPROCESS_SPAWN_H
#define LIFELINE_CPROCESS_SPAWN_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// GNU declarations that the C module Swift imports leaves out (it is not
// compiled with _GNU_SOURCE); these are their prototypes as glibc gives them.
int pipe2(int fds[2], int flags);
int dup3(int from, int to, int flags);
int execvpe(const char *file, char *const argv[], char *const envp[]);

/// O_PATH (a descriptor that names a file without opening it for reading),
/// which glibc defines only for _GNU_SOURCE.
#define LIFELINE_O_PATH 010000000

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

struct lifeline_spawn_request {
    /// The program: a path, or a bare name looked up in PATH when `search_path`.
    /// Unused when `exec_fd` >= 0.
    const char *program;
    int search_path;
    /// An opened file to execute (O_PATH is enough), or -1. The file that runs is
    /// the one this descriptor names, whatever happened to its path since.
    int exec_fd;
    char *const *argv;
    /// NULL: this process's environment.
    char *const *envp;
    /// Descriptors to place at 0, 1 and 2; -1 keeps this process's own.
    int stdio[3];
    /// The child heads a process group of its own.
    int new_process_group;
    /// SIGKILL when the thread that spawned it ends: call only from a thread
    /// that lives as long as the process.
    int die_with_parent;
    /// Leave the descriptors from 3 up as they are (those without close-on-exec
    /// reach the child): for `run`, which passes on what the user gave it.
    int keep_descriptors;
    /// Signals that stay ignored in the child when they are ignored here; every
    /// other signal gets its default action. NULL: all defaults.
    const sigset_t *keep_ignored;
};

static inline void lifeline_spawn_close_from(int first, int keep) {
    // close_range (Linux 5.9) in one call or two around `keep`; a loop up to the
    // descriptor limit where it is missing.
#ifdef SYS_close_range
    long rc;
    if (keep >= first) {
        rc = (keep > first) ? syscall(SYS_close_range, (unsigned)first, (unsigned)(keep - 1), 0) : 0;
        if (rc == 0) rc = syscall(SYS_close_range, (unsigned)(keep + 1), ~0U, 0);
    } else {
        rc = syscall(SYS_close_range, (unsigned)first, ~0U, 0);
    }
    if (rc == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = first; fd < max; fd++)
        if (fd != keep) close(fd);
}

/// A close-on-exec copy of `fd` numbered `low` or more, so placing the
/// descriptors at 0 to 3 cannot overwrite it (the original is closed later
/// with everything from 3 up, or overwritten).
static inline int lifeline_spawn_move_up(int fd, int low) {
    if (fd < 0 || fd >= low) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, low);
    return moved;
}

/// Starts the child. 0 and `*pid` set, or an errno value: a failure to run
/// the program (ENOENT, EACCES, ENOEXEC…) is reported here, not as exit 127.
static inline int lifeline_spawn(const struct lifeline_spawn_request *r, pid_t *pid) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    pid_t parent = getpid();
    sigset_t all, saved;
    sigfillset(&all);
    // No handler of this process may run in the child before its signals are reset.
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    // vfork: the child borrows this process's memory until it execs, so a
    // daemon of 15 MB pays no page-table copy per tmux push or hook. The child
    // writes only its own locals and makes only system calls, and every signal
    // stays blocked until its handlers are reset.
    pid_t child = vfork();
    if (child == 0) {
        int err = 0;
        int out = lifeline_spawn_move_up(report[1], 4);
        int exec_fd = lifeline_spawn_move_up(r->exec_fd, 4);
        int std[3];
        for (int i = 0; i < 3; i++) std[i] = lifeline_spawn_move_up(r->stdio[i], 4);
        if (out < 0 || (r->exec_fd >= 0 && exec_fd < 0)) { err = errno; goto fail; }
        if (r->die_with_parent) {
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) { err = errno; goto fail; }
            // The parent may have died before the line above.
            if (getppid() != parent) _exit(127);
        }
        if (r->new_process_group && setpgid(0, 0) != 0) { err = errno; goto fail; }
        for (int i = 0; i < 3; i++) {
            if (std[i] < 0) continue;
            if (std[i] < 0 || dup2(std[i], i) < 0) { err = errno; goto fail; }
        }
        if (exec_fd >= 0) {
            // Kept at 3 and close-on-exec: the program needs it only up to exec.
            // (A "#!" script cannot run this way: its interpreter would need the
            // descriptor across exec; the caller runs the interpreter instead.)
            if (dup3(exec_fd, 3, O_CLOEXEC) < 0) { err = errno; goto fail; }
            exec_fd = 3;
        }
        if (!r->keep_descriptors) lifeline_spawn_close_from(exec_fd == 3 ? 4 : 3, out);
        for (int s = 1; s < NSIG; s++) {
            if (s == SIGKILL || s == SIGSTOP) continue;
            struct sigaction now;
            if (sigaction(s, NULL, &now) != 0) continue;  // the C library's own signals
            int keep = r->keep_ignored && sigismember(r->keep_ignored, s) == 1 && now.sa_handler == SIG_IGN;
            struct sigaction action = {0};
            action.sa_handler = keep ? SIG_IGN : SIG_DFL;
            sigemptyset(&action.sa_mask);
            sigaction(s, &action, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
        char *const *envp = r->envp ? r->envp : __environ;
        if (exec_fd >= 0) {
            syscall(SYS_execveat, exec_fd, "", r->argv, envp, AT_EMPTY_PATH);
        } else if (r->search_path) {
            execvpe(r->program, r->argv, envp);
        } else {
            execve(r->program, r->argv, envp);
        }
        err = errno;
    fail:
        while (write(out, &err, sizeof err) < 0 && errno == EINTR) {}
        _exit(127);
    }
    int forkErr = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    close(report[1]);
    if (child < 0) {
        close(report[0]);
        return forkErr;
    }
    int err = 0;
    ssize_t n;
    while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {}
    close(report[0]);
    if (n == (ssize_t)sizeof err) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return err ? err : ECHILD;
    }
    *pid = child;
    return 0;
}

/// The signals ignored in this process now (call at start, before installing handlers).
static inline void lifeline_ignored_signals(sigset_t *set) {
    sigemptyset(set);
    for (int s = 1; s < NSIG; s++) {
        struct sigaction now;
        if (sigaction(s, NULL, &now) == 0 && now.sa_handler == SIG_IGN) sigaddset(set, s);
    }
}

#endif
