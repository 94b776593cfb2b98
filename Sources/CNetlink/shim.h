// rtnetlink for Swift: the kernel headers plus the constants and macros Swift
// cannot import (anonymous enums, function-like macros), re-exported as typed
// constants and static inline functions. Kernel headers only: no library to link.
#ifndef LIFELINE_CNETLINK_SHIM_H
#define LIFELINE_CNETLINK_SHIM_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/filter.h>
#include <linux/neighbour.h>

// The poll loop's wake-up descriptor and thread name (glibc hides them from Swift's Glibc module).
static inline int ll_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
static inline void ll_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
// Moves the calling thread into the network namespace open at `fd` (0x40000000 =
// CLONE_NEWNET). Tests use it to open the monitor's sockets inside a private namespace.
static inline int ll_enter_netns(int fd) { return (int)syscall(SYS_setns, fd, 0x40000000); }

// Sizes and alignment of the wire format.
static const uint32_t LL_NLMSG_ALIGNTO = NLMSG_ALIGNTO;
static const uint32_t LL_RTA_ALIGNTO = RTA_ALIGNTO;
static const uint32_t LL_NLMSG_HDRLEN = NLMSG_HDRLEN;
static const uint32_t LL_SIZEOF_NLMSGHDR = sizeof(struct nlmsghdr);
static const uint32_t LL_SIZEOF_NLMSGERR = sizeof(struct nlmsgerr);
static const uint32_t LL_SIZEOF_IFINFOMSG = sizeof(struct ifinfomsg);
static const uint32_t LL_SIZEOF_IFADDRMSG = sizeof(struct ifaddrmsg);
static const uint32_t LL_SIZEOF_RTMSG = sizeof(struct rtmsg);
static const uint32_t LL_SIZEOF_RTATTR = sizeof(struct rtattr);
static const uint32_t LL_SIZEOF_RTNEXTHOP = sizeof(struct rtnexthop);
static const uint32_t LL_SIZEOF_RTGENMSG = sizeof(struct rtgenmsg);

static inline uint32_t ll_nlmsg_align(uint32_t len) { return NLMSG_ALIGN(len); }
static inline uint32_t ll_rta_align(uint32_t len) { return RTA_ALIGN(len); }

// Socket level.
static const int LL_AF_NETLINK = AF_NETLINK;
static const int LL_NETLINK_ROUTE = NETLINK_ROUTE;
static const int LL_SOL_NETLINK = SOL_NETLINK;
static const int LL_NETLINK_ADD_MEMBERSHIP = NETLINK_ADD_MEMBERSHIP;
static const int LL_NETLINK_EXT_ACK = NETLINK_EXT_ACK;
static const uint32_t LL_RTMGRP_LINK = RTMGRP_LINK;
static const uint32_t LL_RTMGRP_IPV4_IFADDR = RTMGRP_IPV4_IFADDR;
static const uint32_t LL_RTMGRP_IPV6_IFADDR = RTMGRP_IPV6_IFADDR;
static const uint32_t LL_RTMGRP_IPV4_ROUTE = RTMGRP_IPV4_ROUTE;
static const uint32_t LL_RTMGRP_IPV6_ROUTE = RTMGRP_IPV6_ROUTE;
static const uint32_t LL_RTMGRP_IPV4_RULE = RTMGRP_IPV4_RULE;
// Neighbour table changes: `diagnose` waits on them for the router's answer.
static const uint32_t LL_RTMGRP_NEIGH = RTMGRP_NEIGH;
// IPv6 rules have no RTMGRP_ bit: the group is joined with NETLINK_ADD_MEMBERSHIP.
static const int LL_RTNLGRP_IPV6_RULE = RTNLGRP_IPV6_RULE;
// Router Advertisement options the kernel does not use itself (the captive
// portal's, option 37) come on this group, one RTM_NEWNDUSEROPT per option.
static const int LL_RTNLGRP_ND_USEROPT = RTNLGRP_ND_USEROPT;
static const uint16_t LL_RTM_NEWNDUSEROPT = RTM_NEWNDUSEROPT;
static const uint32_t LL_SIZEOF_NDUSEROPTMSG = sizeof(struct nduseroptmsg);

// Message types and flags.
static const uint16_t LL_NLMSG_NOOP = NLMSG_NOOP;
static const uint16_t LL_NLMSG_ERROR = NLMSG_ERROR;
static const uint16_t LL_NLMSG_DONE = NLMSG_DONE;
static const uint16_t LL_NLMSG_OVERRUN = NLMSG_OVERRUN;
static const uint16_t LL_RTM_NEWLINK = RTM_NEWLINK;
static const uint16_t LL_RTM_DELLINK = RTM_DELLINK;
static const uint16_t LL_RTM_GETLINK = RTM_GETLINK;
static const uint16_t LL_RTM_NEWADDR = RTM_NEWADDR;
static const uint16_t LL_RTM_DELADDR = RTM_DELADDR;
static const uint16_t LL_RTM_GETADDR = RTM_GETADDR;
static const uint16_t LL_RTM_NEWROUTE = RTM_NEWROUTE;
static const uint16_t LL_RTM_DELROUTE = RTM_DELROUTE;
static const uint16_t LL_RTM_GETROUTE = RTM_GETROUTE;
static const uint16_t LL_RTM_NEWRULE = RTM_NEWRULE;
static const uint16_t LL_RTM_DELRULE = RTM_DELRULE;
static const uint16_t LL_NLM_F_REQUEST = NLM_F_REQUEST;
static const uint16_t LL_NLM_F_MULTI = NLM_F_MULTI;
static const uint16_t LL_NLM_F_ACK = NLM_F_ACK;
static const uint16_t LL_NLM_F_DUMP = NLM_F_DUMP;
static const uint16_t LL_NLM_F_DUMP_INTR = NLM_F_DUMP_INTR;
static const uint16_t LL_NLM_F_REPLACE = NLM_F_REPLACE;
static const uint16_t LL_NLM_F_EXCL = NLM_F_EXCL;
static const uint16_t LL_NLM_F_CREATE = NLM_F_CREATE;
static const uint16_t LL_NLM_F_APPEND = NLM_F_APPEND;

// Attributes.
static const uint16_t LL_IFLA_IFNAME = IFLA_IFNAME;
static const uint16_t LL_IFLA_LINKINFO = IFLA_LINKINFO;
static const uint16_t LL_IFLA_INFO_KIND = IFLA_INFO_KIND;
static const uint16_t LL_IFA_ADDRESS = IFA_ADDRESS;
static const uint16_t LL_IFA_LOCAL = IFA_LOCAL;
static const uint16_t LL_RTA_DST = RTA_DST;
static const uint16_t LL_RTA_OIF = RTA_OIF;
static const uint16_t LL_RTA_GATEWAY = RTA_GATEWAY;
static const uint16_t LL_RTA_PRIORITY = RTA_PRIORITY;
static const uint16_t LL_RTA_PREFSRC = RTA_PREFSRC;
static const uint16_t LL_RTA_MULTIPATH = RTA_MULTIPATH;
static const uint16_t LL_RTA_TABLE = RTA_TABLE;
static const uint16_t LL_RTA_VIA = RTA_VIA;
// A route lookup for a marked packet (a VPN's own traffic under policy routing).
static const uint16_t LL_RTA_MARK = RTA_MARK;
static const uint16_t LL_NLA_TYPE_MASK = NLA_TYPE_MASK;

// Route and link values.
static const uint8_t LL_RT_TABLE_MAIN = RT_TABLE_MAIN;
static const uint8_t LL_RTN_UNICAST = RTN_UNICAST;
static const uint32_t LL_RTNH_F_DEAD = RTNH_F_DEAD;
static const uint32_t LL_RTNH_F_LINKDOWN = RTNH_F_LINKDOWN;
static const uint32_t LL_IFF_UP = IFF_UP;
static const uint32_t LL_IFF_RUNNING = IFF_RUNNING;
static const uint32_t LL_IFF_LOOPBACK = IFF_LOOPBACK;
static const uint32_t LL_IFF_LOWER_UP = IFF_LOWER_UP;
static const uint16_t LL_ARPHRD_ETHER = ARPHRD_ETHER;
static const uint16_t LL_ARPHRD_PPP = ARPHRD_PPP;
static const uint16_t LL_ARPHRD_NONE = ARPHRD_NONE;
static const uint16_t LL_ARPHRD_LOOPBACK = ARPHRD_LOOPBACK;

// Classic BPF socket filter: the kernel drops what cannot matter before it
// wakes the reader (veth churn costs no wake-up). Loads are big-endian.
static const uint16_t LL_BPF_LD_H_ABS = BPF_LD | BPF_H | BPF_ABS;
static const uint16_t LL_BPF_LD_W_ABS = BPF_LD | BPF_W | BPF_ABS;
static const uint16_t LL_BPF_LD_B_ABS = BPF_LD | BPF_B | BPF_ABS;
static const uint16_t LL_BPF_JEQ_K = BPF_JMP | BPF_JEQ | BPF_K;
static const uint16_t LL_BPF_JGT_K = BPF_JMP | BPF_JGT | BPF_K;
static const uint16_t LL_BPF_RET_K = BPF_RET | BPF_K;
static inline int ll_attach_filter(int fd, struct sock_filter *program, unsigned short count) {
    struct sock_fprog fprog = { .len = count, .filter = program };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog);
}

// The neighbour table (ARP for IPv4, neighbour discovery for IPv6): read once
// after a failed probe and by `diagnose`, to tell whether the router answers.
static const uint32_t LL_SIZEOF_NDMSG = sizeof(struct ndmsg);
static const uint16_t LL_RTM_NEWNEIGH = RTM_NEWNEIGH;
static const uint16_t LL_RTM_GETNEIGH = RTM_GETNEIGH;
static const uint16_t LL_NDA_DST = NDA_DST;
static const uint16_t LL_NDA_LLADDR = NDA_LLADDR;
static const uint16_t LL_NUD_INCOMPLETE = NUD_INCOMPLETE;
static const uint16_t LL_NUD_REACHABLE = NUD_REACHABLE;
static const uint16_t LL_NUD_STALE = NUD_STALE;
static const uint16_t LL_NUD_DELAY = NUD_DELAY;
static const uint16_t LL_NUD_PROBE = NUD_PROBE;
static const uint16_t LL_NUD_FAILED = NUD_FAILED;
static const uint16_t LL_NUD_NOARP = NUD_NOARP;
static const uint16_t LL_NUD_PERMANENT = NUD_PERMANENT;

// sock_diag: the kernel's view of every TCP socket (`ss -ti`), read while the
// user's traffic flows to tell how well the connection works. Offsets into
// `struct tcp_info` come from the header, so a field the kernel added later
// is read only when the reply is long enough to hold it.
#include <stddef.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
// glibc's copy of `struct tcp_info` (linux/tcp.h clashes with it in Swift's Glibc module).
#include <netinet/tcp.h>
#include <netinet/in.h>
static const int LL_NETLINK_SOCK_DIAG = NETLINK_SOCK_DIAG;
static const uint16_t LL_SOCK_DIAG_BY_FAMILY = SOCK_DIAG_BY_FAMILY;
static const uint16_t LL_INET_DIAG_INFO = INET_DIAG_INFO;
static const uint8_t LL_IPPROTO_TCP = IPPROTO_TCP;
// The kernel's TCP_ESTABLISHED (include/net/tcp_states.h, not exported to user space).
static const uint8_t LL_TCP_ESTABLISHED = 1;
static const uint32_t LL_SIZEOF_INET_DIAG_REQ_V2 = sizeof(struct inet_diag_req_v2);
static const uint32_t LL_SIZEOF_INET_DIAG_MSG = sizeof(struct inet_diag_msg);
static const uint32_t LL_IDIAG_SPORT = offsetof(struct inet_diag_msg, id.idiag_sport);
static const uint32_t LL_IDIAG_DPORT = offsetof(struct inet_diag_msg, id.idiag_dport);
static const uint32_t LL_IDIAG_SRC = offsetof(struct inet_diag_msg, id.idiag_src);
static const uint32_t LL_IDIAG_DST = offsetof(struct inet_diag_msg, id.idiag_dst);
static const uint32_t LL_IDIAG_IF = offsetof(struct inet_diag_msg, id.idiag_if);
static const uint32_t LL_IDIAG_COOKIE = offsetof(struct inet_diag_msg, id.idiag_cookie);
static const uint32_t LL_IDIAG_INODE = offsetof(struct inet_diag_msg, idiag_inode);
static const uint32_t LL_TCPI_STATE = offsetof(struct tcp_info, tcpi_state);
static const uint32_t LL_TCPI_RTO = offsetof(struct tcp_info, tcpi_rto);
static const uint32_t LL_TCPI_LOST = offsetof(struct tcp_info, tcpi_lost);
static const uint32_t LL_TCPI_RETRANS = offsetof(struct tcp_info, tcpi_retrans);
static const uint32_t LL_TCPI_RTT = offsetof(struct tcp_info, tcpi_rtt);
static const uint32_t LL_TCPI_RTTVAR = offsetof(struct tcp_info, tcpi_rttvar);
static const uint32_t LL_TCPI_TOTAL_RETRANS = offsetof(struct tcp_info, tcpi_total_retrans);
// Fields glibc's copy lacks, at their offsets in the kernel's (fields are only ever appended).
static const uint32_t LL_TCPI_SEGS_OUT = 136;
static const uint32_t LL_TCPI_SEGS_IN = 140;
static const uint32_t LL_TCPI_MIN_RTT = 148;
static const uint32_t LL_TCPI_DATA_SEGS_OUT = 156;
static const uint32_t LL_TCPI_LAST_DATA_RECV = offsetof(struct tcp_info, tcpi_last_data_recv);
static const uint32_t LL_TCPI_LAST_ACK_RECV = offsetof(struct tcp_info, tcpi_last_ack_recv);

#endif
