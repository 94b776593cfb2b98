#!/usr/bin/env python3
"""Change → `notify::connectivity` at a GLib application, N times.

usage: gio_latency.py lifeline FEED EVENT_LOG CLIENT_OUT N
       gio_latency.py netlink NAMESPACE GATEWAY CLIENT_OUT N

lifeline: appends `limited` and `online` observations in turn to FEED (a
daemon's exec monitor with zero debounce windows, so each is published the
moment it is read) and waits for the application's next notify; the change's
moment is the published event's `since` (EVENT_LOG, the daemon's log sink).
netlink: deletes and adds the default route via GATEWAY in NAMESPACE in turn
(through one `ip -batch` process, so no process start is timed) and waits for
the application's next `network-changed` (GLib's netlink monitor emits no
notify::connectivity; its connectivity changes with that signal); the change's
moment is just before the command is written.

CLIENT_OUT is bench/gnetworkmonitor.py's output. Prints: "LABEL: n=N p50=… ms p95=… ms p99=… ms max=… ms".
"""
import json
import subprocess
import sys
import time


def notifies(path, kind="notify"):
    """The moments of the application's `notify connectivity` (or `network-changed`) lines."""
    out = []
    for line in open(path):
        words = line.split()
        if len(words) >= 2 and words[1] == kind:
            out.append(int(words[0]))
    return out


def wait_for_more(path, seen, kind="notify", limit_s=10):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        now = notifies(path, kind)
        if len(now) > seen:
            return now
        time.sleep(0.001)
    sys.exit(f"gio_latency: no {kind} in {limit_s} s ({path})")


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def report(label, samples_us):
    ms = [s / 1000 for s in samples_us]
    print(f"{label}: n={len(ms)} p50={percentile(ms, 50):.2f} ms p95={percentile(ms, 95):.2f} ms "
          f"p99={percentile(ms, 99):.2f} ms max={max(ms):.2f} ms",
          flush=True)


def lifeline(feed, log, client, n):
    def events():
        try:
            return [json.loads(l) for l in open(log) if l.startswith('{"state"')]
        except OSError:
            return []
    samples = []
    for i in range(n):
        state = "limited" if i % 2 == 0 else "online"
        seen, logged = len(notifies(client)), len(events())
        with open(feed, "a") as f:
            f.write(json.dumps({"state": state, "interface": "eth0"}) + "\n")
        stamp = wait_for_more(client, seen)[seen]
        deadline = time.monotonic() + 10
        while len(events()) <= logged and time.monotonic() < deadline:
            time.sleep(0.001)
        event = events()[-1]
        if event["state"] != state:
            sys.exit(f"gio_latency: the daemon published {event['state']}, not {state}")
        samples.append(stamp - event["since"])
    report("publish -> notify::connectivity, Lifeline's GIO module", samples)


def netlink(namespace, gateway, client, n):
    ip = subprocess.Popen(["ip", "-n", namespace, "-batch", "-"], stdin=subprocess.PIPE, text=True)
    samples = []
    for i in range(n):
        command = "route del default via" if i % 2 == 0 else "route add default via"
        seen = len(notifies(client, "network-changed"))
        start = time.time_ns() // 1000
        ip.stdin.write(f"{command} {gateway}\n")
        ip.stdin.flush()
        samples.append(wait_for_more(client, seen, "network-changed")[seen] - start)
        # GLib's netlink monitor may notify more than once per change: let it settle.
        time.sleep(0.05)
    ip.stdin.close()
    ip.wait()
    report("kernel route change -> network-changed, GLib's netlink monitor", samples)


if __name__ == "__main__":
    if sys.argv[1] == "lifeline":
        lifeline(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        netlink(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
