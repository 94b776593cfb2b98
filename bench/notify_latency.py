#!/usr/bin/env python3
"""Toast latency (docs/benchmarks.md, "## Toast"): from a degradation published by
the bus to (1) dunst receiving Notify and (2) dunst's window mapped on screen.

A private session bus, Xvfb and dunst; the daemon runs with an exec monitor fed
through a file and `down = "0s"`, so the log's `since` is the moment of
publication. dbus-monitor stamps each Notify call in microseconds; xwininfo is
polled (every ~2 ms) for dunst's window becoming viewable.
Usage: notify_latency.py LIFELINE_BINARY [ROUNDS]
"""
import json, os, re, signal, statistics, subprocess, sys, tempfile, time

lifeline = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
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

    def dunst_window_mapped():
        out = subprocess.run(["xwininfo", "-root", "-children"], env=env, capture_output=True, text=True).stdout
        for wid in re.findall(r"^\s+(0x[0-9a-f]+) \"Dunst\"", out, re.M):
            info = subprocess.run(["xwininfo", "-id", wid], env=env, capture_output=True, text=True).stdout
            if "IsViewable" in info:
                return time.time()
        return None

    say("online")
    wait_for(lambda: len(events()) == 1)
    to_notify, to_mapped = [], []
    for n in range(rounds):
        before = len(notify_times())
        say("offline")
        mapped = wait_for(dunst_window_mapped, step=0.001)
        wait_for(lambda: len(notify_times()) > before)
        published = [e for e in events() if e["state"] == "offline"][-1]["since"] / 1e6
        to_notify.append((notify_times()[-1] - published) * 1000)
        if mapped:
            to_mapped.append((mapped - published) * 1000)
        say("online")
        wait_for(lambda: events()[-1]["state"] == "online")
        wait_for(lambda: dunst_window_mapped() is None)
        time.sleep(0.05)

    def summary(name, xs):
        xs = sorted(xs)
        p95 = xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]
        print("  %-38s p50 %6.1f ms   p95 %6.1f ms   max %6.1f ms   (n=%d)" % (name, statistics.median(xs), p95, xs[-1], len(xs)))

    print("toast latency after publication (debounce excluded), %d outages:" % rounds)
    summary("published -> Notify received by dunst", to_notify)
    if to_mapped:
        summary("published -> dunst window viewable", to_mapped)
finally:
    for p in reversed(procs):
        p.send_signal(signal.SIGKILL)
        p.wait()
