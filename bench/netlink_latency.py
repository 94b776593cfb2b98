#!/usr/bin/env python3
"""Kernel route change -> state published by the bus, N times.

Drives one persistent `ip -n NS -batch -` (no process start per change) that
alternately deletes and re-adds the default route. For each change it takes the
wall clock just before writing the command and reads the `since` of the event
the daemon's log sink writes: with debounce "0s" the bus stamps `since` at the
moment it publishes, so `since - t0` is kernel change -> netlink -> route table
-> bus -> published (it excludes the sink's write and fsync).
Prints: p50 p95 max (ms) and the number of changes.
"""
import json, os, subprocess, sys, time

ns, log, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

def lines():
    try:
        with open(log) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []

def wait_for(n, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        current = lines()
        if len(current) >= n:
            return current
        time.sleep(0.0005)
    sys.exit(f"no event {n} within {timeout}s; log has {len(lines())} lines")

ip = subprocess.Popen(["ip", "-n", ns, "-batch", "-"], stdin=subprocess.PIPE, text=True, bufsize=1)
seen = len(wait_for(1))
latencies = []
for i in range(count):
    command = "route del default via 10.77.0.1" if i % 2 == 0 else "route add default via 10.77.0.1"
    t0 = time.time_ns() // 1000
    ip.stdin.write(command + "\n")
    ip.stdin.flush()
    current = wait_for(seen + 1)
    event = json.loads(current[seen])
    expected = "offline" if i % 2 == 0 else "online"
    if event["state"] != expected:
        sys.exit(f"change {i}: expected {expected}, got {event}")
    latencies.append((event["since"] - t0) / 1000.0)
    seen = len(current)
    time.sleep(0.005)  # let the daemon go idle again, as between real changes
ip.stdin.close()
ip.wait()
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
print(f"{pick(0.50):.3f} {pick(0.95):.3f} {latencies[-1]:.3f} {len(latencies)}")
