#!/usr/bin/env python3
"""Toast latency: from a degradation published by
the bus to (1) dunst receiving Notify and (2) dunst's window mapped on screen.

A private session bus, Xvfb and dunst; the daemon runs with an exec monitor fed
through a file and `down = "0s"`, so the log's `since` is the moment of
publication. dbus-monitor stamps each Notify call in microseconds; xev listens
on the root window, and each MapNotify (dunst's window mapped) is stamped the
moment its line arrives: no polling that would compete with dunst for the CPU.
Percentiles are nearest-rank; 100 outages by default, so p99 is not the maximum.
Usage: notify_latency.py LIFELINE_BINARY [ROUNDS]
"""
import json, math, os, re, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

lifeline = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 100
work = tempfile.mkdtemp(prefix="lifeline-notify-bench-")
procs = []

def start(argv, env, out=subprocess.DEVNULL):
    p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.DEVNULL)
    procs.append(p)
    return p

def wait_for(predicate, timeout=10.0, step=0.002):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return None

try:
    bus_socket = os.path.join(work, "bus")
    env = dict(os.environ)
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + bus_socket
    start(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + env["DBUS_SESSION_BUS_ADDRESS"]], env)
    wait_for(lambda: os.path.exists(bus_socket))
    display = ":%d" % (150 + os.getpid() % 50)
    env["DISPLAY"] = display
    start(["Xvfb", display, "-screen", "0", "1024x600x24", "-nolisten", "tcp"], env)
    wait_for(lambda: os.path.exists("/tmp/.X11-unix/X" + display[1:]))
    start(["dunst"], env)
    wait_for(lambda: subprocess.run(["dunstctl", "is-paused"], env=env, capture_output=True).returncode == 0)

    monitor_log = open(os.path.join(work, "monitor.log"), "w")
    start(["dbus-monitor", "--session", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"], env, monitor_log)
    time.sleep(0.3)

    feed = os.path.join(work, "feed.jsonl")
    open(feed, "w").close()
    log = os.path.join(work, "events.jsonl")
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write('[debounce]\ndown = "0s"\nup = "0s"\n[[monitor]]\nkind = "exec"\ncommand = ["tail", "-n", "+1", "-F", "%s"]\n'
                '[[sink]]\nkind = "libnotify"\nback_online = false\n[[sink]]\nkind = "log"\npath = "%s"\n' % (feed, log))
    env["XDG_RUNTIME_DIR"] = work
    env["LIFELINE_LOG_LEVEL"] = "warning"
    start([lifeline, "daemon", "--config", config], env)

    def say(state):
        with open(feed, "a") as f:
            f.write(json.dumps({"state": state, "interface": "eth0", "reason": "bench"}) + "\n")

    def events():
        try:
            return [json.loads(l) for l in open(log) if l.strip()]
        except (OSError, ValueError):
            return []

    def notify_times():
        text = open(os.path.join(work, "monitor.log")).read()
        return [float(t) for t in re.findall(r"^method call time=([0-9.]+) .*member=Notify$", text, re.M)]

    # dunst is the only X client that maps windows here: each MapNotify is its toast
    # appearing, each UnmapNotify the toast closing.
    xev = subprocess.Popen(["stdbuf", "-oL", "xev", "-root", "-event", "substructure"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    procs.append(xev)
    window_events = []  # (wall-clock time the line arrived, "MapNotify" or "UnmapNotify")
    def read_xev():
        for line in xev.stdout:
            kind = line.split(" ", 1)[0]
            if kind in ("MapNotify", "UnmapNotify"):
                window_events.append((time.time(), kind))
    threading.Thread(target=read_xev, daemon=True).start()
    time.sleep(0.3)

    def event_after(count, kind):
        found = [t for t, k in window_events[count:] if k == kind]
        return found[0] if found else None

    say("online")
    wait_for(lambda: len(events()) == 1)
    to_notify, to_mapped = [], []
    for n in range(rounds):
        before = len(notify_times())
        seen = len(window_events)
        say("offline")
        mapped = wait_for(lambda: event_after(seen, "MapNotify"))
        wait_for(lambda: len(notify_times()) > before)
        published = [e for e in events() if e["state"] == "offline"][-1]["since"] / 1e6
        to_notify.append((notify_times()[-1] - published) * 1000)
        if mapped:
            to_mapped.append((mapped - published) * 1000)
        seen = len(window_events)
        say("online")
        wait_for(lambda: events()[-1]["state"] == "online")
        wait_for(lambda: event_after(seen, "UnmapNotify"))
        time.sleep(0.05)

    def summary(name, xs):
        xs = sorted(xs)
        def rank(p):
            return xs[max(0, math.ceil(p * len(xs)) - 1)]
        print("  %-38s p50 %6.1f ms   p95 %6.1f ms   p99 %6.1f ms   max %6.1f ms   (n=%d)"
              % (name, statistics.median(xs), rank(0.95), rank(0.99), xs[-1], len(xs)))

    print("toast latency after publication (debounce excluded), %d outages:" % rounds)
    summary("published -> Notify received by dunst", to_notify)
    if to_mapped:
        summary("published -> dunst window viewable", to_mapped)
finally:
    for p in reversed(procs):
        p.send_signal(signal.SIGKILL)
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
