#!/usr/bin/env python3
"""Toast on each notification server (bench/toast-servers.sh):
from an outage published by the bus to the server's reply to our Notify.

Per server, a private session bus and the server on its headless desktop: dunst
on Xvfb; mako and swaync on headless sway, GNOME Shell 43 headless and KDE
Plasma's plasmashell on Xvfb, these as the user `nobody` (GNOME Shell with
python-dbusmock's logind on a private system bus; plasmashell with the activity
manager and kded5 it needs, started here rather than by its bus, which would
leave them running). The daemon runs as root with an exec monitor fed through a file and
`down = "0s"`, so the log's `since` is the moment of publication; dbus-monitor
stamps the Notify call and its method return (matched by serial). Each round is
one outage (a new toast) and its end (the toast closed). Percentiles are
nearest-rank. Needs root and the Makefile's TEST_PACKAGES.
Usage: toast_servers.py LIFELINE_BINARY [ROUNDS] [SERVER...]
"""
import json, math, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

lifeline = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 50
servers = sys.argv[3:] or ["dunst", "mako", "swaync", "gnome-shell", "plasma"]
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
    """Starts `server` on a headless desktop; returns its session bus address and X display (or None)."""
    run = work + "/run"
    os.makedirs(run)
    shutil.chown(work, USER, GROUP)
    shutil.chown(run, USER, GROUP)
    os.chmod(run, 0o700)
    user_env = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_RUNTIME_DIR": run, "NO_AT_BRIDGE": "1", "GTK_A11Y": "none"}
    if server in ("dunst", "plasma"):
        display = ":%d" % (150 + os.getpid() % 50)
        while os.path.exists("/tmp/.X11-unix/X" + display[1:]):
            display = ":%d" % (int(display[1:]) + 1)
        start(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        wait_for(lambda: os.path.exists("/tmp/.X11-unix/X" + display[1:]))
    if server == "dunst":
        address = bus(work, "bus")
        start(["dunst"], dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, DISPLAY=display))
    elif server == "plasma":
        address = bus(work, "bus", user=True)
        env = dict(user_env, DBUS_SESSION_BUS_ADDRESS=address, DISPLAY=display, QT_QPA_PLATFORM="xcb")
        for argv in (["/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd"], ["kded5"], ["plasmashell"]):
            start(as_user(argv, env))
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
    if server == "plasma":
        # plasmashell owns the name long before it has loaded its desktop, which
        # holds its main thread (and so its answers) for tens of seconds.
        def idle():
            t = time.monotonic()
            r = subprocess.run(["gdbus", "call", "--address", address, "--dest", "org.freedesktop.Notifications",
                                "--object-path", "/org/freedesktop/Notifications", "--timeout", "2",
                                "--method", "org.freedesktop.Notifications.GetServerInformation"], capture_output=True)
            return r.returncode == 0 and time.monotonic() - t < 0.1
        wait_for(lambda: all(idle() for _ in range(5)), timeout=120, step=0.5, what="plasmashell idle")
    return address, (display if server in ("dunst", "plasma") else None)


def popups(display):
    """plasmashell's notification popups on screen. It draws them in software here, on
    its main thread, which answers Notify too: a popup still sliding out holds the
    reply for a second or more, which a desktop with a GPU does not see."""
    tree = subprocess.run(["xwininfo", "-root", "-children", "-display", display], capture_output=True, text=True).stdout
    count = 0
    for line in tree.splitlines():
        line = line.strip()
        if not (line.startswith("0x") and '("plasmashell"' in line):
            continue
        wid = line.split()[0]
        kind = subprocess.run(["xprop", "-display", display, "-id", wid, "_NET_WM_WINDOW_TYPE"], capture_output=True, text=True).stdout
        if "_NET_WM_WINDOW_TYPE_NOTIFICATION" in kind and "IsViewable" in subprocess.run(
                ["xwininfo", "-id", wid, "-display", display], capture_output=True, text=True).stdout:
            count += 1
    return count


def measure(server):
    work = tempfile.mkdtemp(prefix="lifeline-toast-bench-")
    os.chmod(work, 0o755)
    mine = len(procs)
    daemon_dir = tempfile.mkdtemp(prefix="lifeline-toast-bench-daemon-")
    try:
        address, display = desktop(server, work)

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

        def say(state, n=0):
            # Each outage says something new: Plasma refuses a toast like the one
            # before it within a second ("Created too many similar notifications").
            with open(feed, "a") as f:
                f.write(json.dumps({"state": state, "interface": "eth0", "reason": "bench %d" % n}) + "\n")

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
        for n in range(rounds):
            before = len(replies())
            say("offline", n)
            wait_for(lambda: len(replies()) > before, what="the reply to Notify")
            published = [e for e in events() if e["state"] == "offline"][-1]["since"] / 1e6
            samples.append((replies()[before] - published) * 1000)
            say("online")
            wait_for(lambda: events()[-1]["state"] == "online")
            time.sleep(0.1)
            if server == "plasma":
                wait_for(lambda: popups(display) == 0, what="the popup gone", step=0.2)
        xs = sorted(samples)
        rank = lambda p: xs[max(0, math.ceil(p * len(xs)) - 1)]
        print("  %-12s published -> Notify reply   p50 %6.1f ms   p99 %6.1f ms   max %6.1f ms   (n=%d)"
              % (server, statistics.median(xs), rank(0.99), xs[-1], len(xs)), flush=True)
    finally:
        for p in reversed(procs[mine:]):
            p.send_signal(signal.SIGKILL)
            p.wait()
        del procs[mine:]
        # plasmashell's KIO workers run in sessions of their own and name its folder.
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if work.encode() in open("/proc/%s/cmdline" % pid, "rb").read():
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
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
