// Process handles for Swift: pidfd_open has no glibc wrapper in the module
// Swift imports, and `syscall` is variadic, which Swift cannot call.
// Kernel headers only: no library to link.
#ifndef LIFELINE_CPROCESS_SHIM_H
#define LIFELINE_CPROCESS_SHIM_H

#include <errno.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/// A file descriptor that polls readable once process `pid` has exited
/// (Linux 5.3+); -1 with errno set otherwise (ENOSYS on older kernels).
static inline int lifeline_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// glibc 2.34+: the child closes every descriptor from `from` up before it
/// runs the program. glibc declares it only for _GNU_SOURCE, which the C module
/// Swift imports is not; this is its prototype as glibc's <spawn.h> gives it.
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

#endif
