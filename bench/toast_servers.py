#!/usr/bin/env python3
"""Toast on each notification server (bench/toast-servers.sh):
from an outage published by the bus to the server's reply to our Notify.

Per server, a private session bus and the server on its headless desktop: dunst
on Xvfb; mako and swaync on headless sway and GNOME Shell 43 headless, these as
the user `nobody` (GNOME Shell with python-dbusmock's logind on a private system
bus). The daemon runs as root with an exec monitor fed through a file and
`down = "0s"`, so the log's `since` is the moment of publication; dbus-monitor
stamps the Notify call and its method return (matched by serial). Each round is
one outage (a new toast) and its end (the toast closed). Percentiles are
nearest-rank. Needs root and the Makefile's TEST_PACKAGES.
Usage: toast_servers.py LIFELINE_BINARY [ROUNDS] [SERVER...]
"""
import json, math, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

lifeline = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 50
servers = sys.argv[3:] or ["dunst", "mako", "swaync", "gnome-shell"]
USER, GROUP = "nobody", "nogroup"
procs = []


def start(argv, env=None, out=subprocess.DEVNULL):
    p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT if out != subprocess.DEVNULL else subprocess.DEVNULL)
    procs.append(p)
    return p


def wait_for(predicate, timeout=30.0, step=0.01, what="a condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise SystemExit("toast_servers.py: timed out waiting for " + what)


def as_user(argv, env):
    return ["setpriv", "--reuid=" + USER, "--regid=" + GROUP, "--clear-groups", "env", "-i"] + \
        ["%s=%s" % kv for kv in env.items()] + argv


def bus(work, name, kind="session", services=None, user=False):
    """A dbus-daemon both root and the desktop's user may join; its address."""
    address = "unix:path=%s/%s" % (work, name)
    servicedir = "<servicedir>%s</servicedir>" % services if services else ""
    with open("%s/%s.conf" % (work, name), "w") as f:
        f.write('<busconfig><type>%s</type><listen>%s</listen><auth>EXTERNAL</auth>%s'
                '<policy context="default"><allow user="root"/><allow user="%s"/><allow send_destination="*" eavesdrop="true"/>'
                '<allow eavesdrop="true"/><allow own="*"/></policy></busconfig>' % (kind, address, servicedir, USER))
    os.chmod("%s/%s.conf" % (work, name), 0o644)
    argv = ["dbus-daemon", "--config-file=%s/%s.conf" % (work, name), "--nofork", "--nopidfile"]
    start(as_user(argv, {"PATH": "/usr/bin:/bin", "HOME": work}) if user else argv)
    wait_for(lambda: os.path.exists("%s/%s" % (work, name)))
    return address


def owned(address, name="org.freedesktop.Notifications"):
    r = subprocess.run(["gdbus", "call", "--address", address, "--dest", "org.freedesktop.DBus", "--object-path",
                        "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", name],
                       capture_output=True, text=True)
    return "true" in r.stdout


def desktop(server, work):
    """Starts `server` on a headless desktop; returns its session bus address."""
    run = work + "/run"
    os.makedirs(run)
    shutil.chown(work, USER, GROUP)
    shutil.chown(run, USER, GROUP)
    os.chmod(run, 0o700)
    user_env = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_RUNTIME_DIR": run, "NO_AT_BRIDGE": "1", "GTK_A11Y": "none"}
    if server == "dunst":
        address = bus(work, "bus")
        display = ":%d" % (150 + os.getpid() % 50)
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, DISPLAY=display)
        start(["Xvfb", display, "-screen", "0", "1024x600x24", "-nolisten", "tcp"])
        wait_for(lambda: os.path.exists("/tmp/.X11-unix/X" + display[1:]))
        start(["dunst"], env)
    elif server in ("mako", "swaync"):
        address = bus(work, "bus")
        with open(work + "/sway.conf", "w") as f:
            f.write("output HEADLESS-1 resolution 1280x720\n")
        os.chmod(work + "/sway.conf", 0o644)
        user_env["DBUS_SESSION_BUS_ADDRESS"] = address
        start(as_user(["sway", "-c", work + "/sway.conf"],
                      dict(user_env, WLR_BACKENDS="headless", WLR_LIBINPUT_NO_DEVICES="1", WLR_RENDERER="pixman")))
        socket = wait_for(lambda: next((n for n in os.listdir(run) if n.startswith("wayland-") and not n.endswith(".lock")), None))
        start(as_user([server], dict(user_env, WAYLAND_DISPLAY=socket)))
    else:
        services = work + "/services"
        os.makedirs(services)
        shutil.copy("/usr/share/dbus-1/services/org.gnome.Shell.Notifications.service", services)
        lock = work + "/.local/share/gnome-shell"
        os.makedirs(lock)
        open(lock + "/lock-warning-shown", "w").close()
        subprocess.run(["chown", "-R", "%s:%s" % (USER, GROUP), work], check=True)
        address = bus(work, "bus", services=services, user=True)
        system = bus(work, "system-bus", kind="system", user=True)
        start(["/usr/bin/python3", "-m", "dbusmock", "--template", "logind", "--system"],
              dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=system))
        wait_for(lambda: owned(system, "org.freedesktop.login1"))
        subprocess.run(["gdbus", "call", "--address", system, "--dest", "org.freedesktop.login1", "--object-path",
                        "/org/freedesktop/login1", "--method", "org.freedesktop.DBus.Mock.AddSession",
                        "bench", "seat0", "65534", USER, "true"], check=True, capture_output=True)
        start(as_user(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x800"],
                      dict(user_env, DBUS_SESSION_BUS_ADDRESS=address, DBUS_SYSTEM_BUS_ADDRESS=system,
                           XDG_SESSION_ID="bench")))
    wait_for(lambda: owned(address), timeout=90, what=server + " on the bus")
    return address


def measure(server):
    work = tempfile.mkdtemp(prefix="lifeline-toast-bench-")
    os.chmod(work, 0o755)
    mine = len(procs)
    daemon_dir = tempfile.mkdtemp(prefix="lifeline-toast-bench-daemon-")
    try:
        address = desktop(server, work)

        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, XDG_RUNTIME_DIR=daemon_dir, LIFELINE_LOG_LEVEL="warning",
                   DBUS_SYSTEM_BUS_ADDRESS="unix:path=%s/none" % daemon_dir)
        monitor_log = open(daemon_dir + "/monitor.log", "w")
        start(["dbus-monitor", "--address", address,
               "type='method_call',interface='org.freedesktop.Notifications',member='Notify',destination='org.freedesktop.Notifications'",
               "type='method_return'"], env, monitor_log)
        time.sleep(0.3)
        feed, log = daemon_dir + "/feed.jsonl", daemon_dir + "/events.jsonl"
        open(feed, "w").close()
        with open(daemon_dir + "/config.toml", "w") as f:
            f.write('[debounce]\ndown = "0s"\nup = "0s"\n[[monitor]]\nkind = "exec"\ncommand = ["tail", "-n", "+1", "-F", "%s"]\n'
                    '[[sink]]\nkind = "libnotify"\nback_online = false\n[[sink]]\nkind = "log"\npath = "%s"\n' % (feed, log))
        start([lifeline, "daemon", "--config", daemon_dir + "/config.toml"], env)

        def say(state):
            with open(feed, "a") as f:
                f.write(json.dumps({"state": state, "interface": "eth0", "reason": "bench"}) + "\n")

        def events():
            try:
                return [json.loads(l) for l in open(log) if l.strip()]
            except (OSError, ValueError):
                return []

        def replies():
            """Wall-clock times of the server's replies to our Notify calls, in order. The
            monitor's rule keeps the calls to the name's owner (GDBus writes its unique name)."""
            text = open(daemon_dir + "/monitor.log").read()
            calls = re.findall(r"^method call time=[0-9.]+ sender=(\S+) -> destination=\S+ serial=(\d+) .*member=Notify$", text, re.M)
            returns = {(d, s): float(t) for t, d, s in
                       re.findall(r"^method return time=([0-9.]+) sender=\S+ -> destination=(\S+) serial=\d+ reply_serial=(\d+)", text, re.M)}
            return [returns[c] for c in calls if c in returns]

        say("online")
        wait_for(lambda: len(events()) == 1, what="the first event")
        samples = []
        for _ in range(rounds):
            before = len(replies())
            say("offline")
            wait_for(lambda: len(replies()) > before, what="the reply to Notify")
            published = [e for e in events() if e["state"] == "offline"][-1]["since"] / 1e6
            samples.append((replies()[before] - published) * 1000)
            say("online")
            wait_for(lambda: events()[-1]["state"] == "online")
            time.sleep(0.1)
        xs = sorted(samples)
        rank = lambda p: xs[max(0, math.ceil(p * len(xs)) - 1)]
        print("  %-12s published -> Notify reply   p50 %6.1f ms   p99 %6.1f ms   max %6.1f ms   (n=%d)"
              % (server, statistics.median(xs), rank(0.99), xs[-1], len(xs)), flush=True)
    finally:
        for p in reversed(procs[mine:]):
            p.send_signal(signal.SIGKILL)
            p.wait()
        del procs[mine:]
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(daemon_dir, ignore_errors=True)


print("toast latency after publication (debounce excluded), %d outages per server:" % rounds)
try:
    for s in servers:
        measure(s)
finally:
    for p in reversed(procs):
        p.send_signal(signal.SIGKILL)
        p.wait()
