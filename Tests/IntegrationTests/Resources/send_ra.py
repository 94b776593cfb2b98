#!/usr/bin/env python3
"""Sends IPv6 Router Advertisements carrying the captive-portal option (RFC 8910,
type 37) on a test veth (never onto a real network).

usage: send_ra.py IFACE URI [COUNT [PER_SECOND [VARY]]]

COUNT RAs (default 1) at PER_SECOND (default: as fast as it can); with VARY
set, every RA's URI ends in its own number (a portal URL that keeps changing).
Router lifetime 0: the RA adds no route, the kernel still passes the option on.
Prints "sent N at MS" at the end: MS is the wall-clock time (ms since the
epoch) of the first RA's sending, so a caller can time from the RA itself
rather than from this script's exit. Debian's scapy has no class for option 37, and
radvd has no setting for it, so the option is built by hand.
"""
import sys
import time

from scapy.all import ICMPv6ND_RA, ICMPv6NDOptSrcLLAddr, IPv6, Ether, Raw, conf, get_if_hwaddr

conf.verb = 0
iface, uri = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rate = float(sys.argv[4]) if len(sys.argv) > 4 else 0
vary = len(sys.argv) > 5


def option(text):
    value = text.encode()
    length = (2 + len(value) + 7) // 8
    return bytes([37, length]) + value + b"\0" * (length * 8 - 2 - len(value))


mac = get_if_hwaddr(iface)
frames = []
for i in range(count if vary else 1):
    text = uri + str(i) if vary else uri
    frames.append(Ether(src=mac, dst="33:33:00:00:00:01")
                  / IPv6(src="fe80::1", dst="ff02::1", hlim=255)
                  / ICMPv6ND_RA(routerlifetime=0)
                  / ICMPv6NDOptSrcLLAddr(lladdr=mac)
                  / Raw(load=option(text)))
from scapy.all import conf as c
sock = c.L2socket(iface=iface)
start = time.monotonic()
first = None
for i in range(count):
    sock.send(frames[i % len(frames)])
    if first is None:
        first = time.time()
    if rate:
        due = start + (i + 1) / rate
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
sock.close()
print("sent %d at %d" % (count, first * 1000), flush=True)
