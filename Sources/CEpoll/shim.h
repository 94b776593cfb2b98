// epoll, eventfd and timerfd for the daemon's executor: glibc has them, but
// the Glibc module Swift imports does not include their headers.
// Headers only: no library to link.
#ifndef LIFELINE_CEPOLL_SHIM_H
#define LIFELINE_CEPOLL_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#endif
