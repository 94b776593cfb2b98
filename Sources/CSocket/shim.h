// glibc's socket types and message flags under names of our own.
// glibc declares SOCK_STREAM, MSG_NOSIGNAL and their kin as enum constants
// (`enum __socket_type { SOCK_STREAM = 1, ... }` with `#define SOCK_STREAM
// SOCK_STREAM`), in headers that several C modules include textually
// (rtnetlink's, libcurl's). Swift credits such a constant to whichever of those
// modules it met first, so on a clean build a file that imports only Glibc
// may not find `SOCK_STREAM` at all. These copies have one owner.
// Headers only: no library to link.
#ifndef LIFELINE_CSOCKET_SHIM_H
#define LIFELINE_CSOCKET_SHIM_H

#include <sys/socket.h>

static const int LL_SOCK_STREAM = SOCK_STREAM;
static const int LL_SOCK_DGRAM = SOCK_DGRAM;
static const int LL_SOCK_RAW = SOCK_RAW;
static const int LL_SOCK_CLOEXEC = SOCK_CLOEXEC;
static const int LL_SOCK_NONBLOCK = SOCK_NONBLOCK;
static const int LL_MSG_NOSIGNAL = MSG_NOSIGNAL;
static const int LL_MSG_TRUNC = MSG_TRUNC;
static const int LL_MSG_DONTWAIT = MSG_DONTWAIT;

#endif
