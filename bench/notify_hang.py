#!/usr/bin/env python3
"""A hung notification server must not slow the daemon's D-Bus service
(bench/notify-hang.sh).

A private session bus, Xvfb and dunst; the daemon runs the dbus, libnotify and
log sinks with an exec monitor fed through a file and `down = "0s"`, so the
log's `since` is the moment of publication. For each phase (dunst answering,
then dunst stopped with SIGSTOP) it publishes ROUNDS transitions and measures
publication -> StateChanged at dbus-monitor (which stamps arrival in µs), then
GetStatus() and Check() round trips from one client (`lifeline-bench call`).
A stopped dunst keeps libnotify waiting for its 25 s timeout on every toast.
Usage: notify_hang.py LIFELINE LIFELINE_BENCH [ROUNDS]
"""
import json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

lifeline, bench = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
work = tempfile.mkdtemp(prefix="lifeline-notify-hang-")
procs = []

def start(argv, env, out=subprocess.DEVNULL):
    p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.DEVNULL)
    procs.append(p)
    return p

def wait_for(predicate, timeout=10.0, step=0.001):
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
    display = ":%d" % (200 + os.getpid() % 50)
    env["DISPLAY"] = display
    start(["Xvfb", display, "-screen", "0", "1024x600x24", "-nolisten", "tcp"], env)
    wait_for(lambda: subprocess.run(["xwininfo", "-root", "-display", display], capture_output=True).returncode == 0)
    dunst = start(["dunst"], env)
    wait_for(lambda: subprocess.run(["dunstctl", "is-paused"], env=env, capture_output=True).returncode == 0)

    signals_path = os.path.join(work, "signals.log")
    start(["dbus-monitor", "--session", "type='signal',interface='org.lifeline.Lifeline1',member='StateChanged'"],
          env, open(signals_path, "w"))
    wait_for(lambda: "member=NameLost" in open(signals_path).read())

    feed = os.path.join(work, "feed.jsonl")
    open(feed, "w").close()
    log = os.path.join(work, "events.jsonl")
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write('[debounce]\ndown = "0s"\nup = "0s"\n[[monitor]]\nkind = "exec"\ncommand = ["tail", "-n", "+1", "-F", "%s"]\n'
                '[[sink]]\nkind = "dbus"\n[[sink]]\nkind = "libnotify"\n[[sink]]\nkind = "log"\npath = "%s"\n' % (feed, log))
    env["XDG_RUNTIME_DIR"] = work
    env["XDG_STATE_HOME"] = work
    env["LIFELINE_LOG_LEVEL"] = "warning"
    start([lifeline, "daemon", "--config", config], env)

    counter = [0]
    def say(state):
        counter[0] += 1
        with open(feed, "a") as f:
            f.write(json.dumps({"state": state, "interface": "eth0" if state == "online" else "",
                                "reason": "bench %d" % counter[0]}) + "\n")

    def events():
        try:
            return [json.loads(l) for l in open(log) if l.strip()]
        except (OSError, ValueError):
            return []

    def signal_times():
        text = open(signals_path).read()
        return [float(t) for t in re.findall(r"^signal time=([0-9.]+) .*member=StateChanged$", text, re.M)]

    say("online")
    wait_for(lambda: len(events()) == 1 and len(signal_times()) == 1)

    def summary(name, xs):
        xs = sorted(xs)
        p95 = xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]
        print("  %-44s p50 %7.2f ms   p95 %7.2f ms   max %7.2f ms   (n=%d)" % (name, statistics.median(xs), p95, xs[-1], len(xs)))

    def phase(title):
        print(title)
        latencies = []
        for n in range(rounds):
            before_events, before_signals = len(events()), len(signal_times())
            say("offline" if n % 2 == 0 else "online")
            if not wait_for(lambda: len(events()) > before_events and len(signal_times()) > before_signals, timeout=60):
                print("  StateChanged did not come within 60 s")
                break
            latencies.append((signal_times()[-1] - events()[-1]["since"] / 1e6) * 1000)
            time.sleep(0.02)
        if latencies:
            summary("published -> StateChanged at dbus-monitor", latencies)
        for member in ["GetStatus", "Check"]:
            out = subprocess.run([bench, "call", member, "--count", "200"], env=env, capture_output=True, text=True, timeout=300)
            print("  " + out.stdout.strip())

    phase("dunst answering:")
    say("online")
    time.sleep(0.5)
    os.kill(dunst.pid, signal.SIGSTOP)
    phase("dunst stopped (SIGSTOP), libnotify waiting on it:")
    os.kill(dunst.pid, signal.SIGCONT)
finally:
    for p in reversed(procs):
        p.send_signal(signal.SIGKILL)
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
