#!/usr/bin/env python3
"""The soak's driver and judge (scripts/soak.sh builds the lab and runs this).

Starts the daemon in the client namespace, then until the time is up applies a
random fault or change, holds it for a random time (some shorter than the
debounce windows, some longer), and moves on. Every checkpoint lifts every
fault, waits for `online`, and checks the invariants on everything recorded so
far; the first checkpoint after the warm-up (every kind of fault seen at least
once) gives the baseline for memory, file descriptors and threads.

Invariants:
  log        every StateChanged signal's sequence has its line in the event log
             (all rotated files), and the log's sequences have no gap
  toasts     per outage (a published degradation up to the next published
             online), at most one new toast (Notify with replaces_id 0), plus one
             for each time the notification server was started again during it;
             at most one new "Back online"; no outage toast outside an outage
  memory     VmRSS at each checkpoint after the baseline within 1 MB of it
  fds        /proc/PID/fd entries never above the baseline at a checkpoint
  threads    /proc/PID/task entries never above the baseline at a checkpoint
  recovers   the daemon says online (state file and tmux) once faults are lifted
  alive      the daemon runs throughout and exits 0 on SIGTERM
"""
import argparse, glob, json, os, random, re, signal, subprocess, sys, time

RSS_SLACK_KB = 1024

p = argparse.ArgumentParser()
p.add_argument("--minutes", type=float, required=True)
p.add_argument("--work", required=True)
p.add_argument("--bin", required=True)
p.add_argument("--client", required=True)
p.add_argument("--upstream", required=True)
p.add_argument("--gateway", required=True)
p.add_argument("--tag", required=True)
p.add_argument("--seed", type=int, default=None)
args = p.parse_args()

work = args.work
seed = args.seed if args.seed is not None else random.randrange(1 << 31)
rng = random.Random(seed)
total = args.minutes * 60
warmup = min(120.0, total * 0.2)
checkpoint_every = max(30.0, min(120.0, total / 6))
tmux_socket = os.path.join(work, "tmux", "tmux-0", "soak")
state_file = os.path.join(work, "run", "lifeline", "state.json")
log_path = os.path.join(work, "state", "lifeline", "events.jsonl")  # the log sink's default under XDG_STATE_HOME
feed_path = os.path.join(work, "feed.jsonl")
nft_table = "lifeline_soak_" + args.tag


def note_pid(pid):
    with open(os.path.join(work, "pids"), "a") as f:
        f.write("%d\n" % pid)


def run(argv, check=True, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r


def wait_for(predicate, timeout, step=0.05):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > end:
            return value
        time.sleep(step)


# ---------------------------------------------------------------- the daemon

daemon_env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_RUNTIME_DIR=os.path.join(work, "run"),
                  XDG_STATE_HOME=os.path.join(work, "state"))
daemon_err = open(os.path.join(work, "daemon.log"), "w")
# `ip netns exec` and the front binary both exec: the pid stays the daemon's.
daemon = subprocess.Popen(["ip", "netns", "exec", args.client, args.bin, "daemon"], env=daemon_env,
                          stdout=daemon_err, stderr=daemon_err)
note_pid(daemon.pid)


def proc_numbers():
    """VmRSS and RssAnon (kB), open file descriptors and threads of the daemon."""
    fields = {}
    with open("/proc/%d/status" % daemon.pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()[0] if value.split() else ""
    return {"rss": int(fields["VmRSS"]), "anon": int(fields["RssAnon"]),
            "fds": len(os.listdir("/proc/%d/fd" % daemon.pid)), "threads": len(os.listdir("/proc/%d/task" % daemon.pid))}


def published_state():
    try:
        with open(state_file) as f:
            return json.load(f).get("state")
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- the faults

class Toggle:
    """A fault that is either applied or not."""

    def __init__(self, name, apply, lift):
        self.name, self._apply, self._lift = name, apply, lift
        self.on = False
        self.count = 0

    def flip(self):
        if self.on:
            self.lift()
        else:
            self._apply()
            self.on = True
            self.count += 1

    def lift(self):
        if self.on:
            self._lift()
            self.on = False


dunst = None
server_starts = []  # wall-clock seconds: a notification server was started


def start_dunst():
    global dunst
    server_starts.append(time.time())
    dunst = subprocess.Popen(["dunst"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    note_pid(dunst.pid)
    if not wait_for(lambda: run(["dunstctl", "is-paused"], check=False).returncode == 0, 15):
        raise RuntimeError("dunst did not come onto the bus within 15 s")


def kill_dunst():
    global dunst
    dunst.kill()  # as a crash: no goodbye on the bus
    dunst.wait()
    dunst = None


def start_tmux():
    run(["tmux", "-S", tmux_socket, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "10", "sleep infinity"])
    pid = run(["tmux", "-S", tmux_socket, "display-message", "-p", "#{pid}"]).stdout.strip()
    note_pid(int(pid))


def kill_tmux():
    run(["tmux", "-S", tmux_socket, "kill-server"], check=False)


def blackhole():
    rules = ("table inet %s {\n    chain in { type filter hook input priority 0; policy accept; iifname \"v1\" drop; }\n}\n"
             % nft_table)
    run(["ip", "netns", "exec", args.upstream, "nft", "-f", "-"], input=rules)


client_ip = ["ip", "-n", args.client]
upstream_ip = ["ip", "-n", args.upstream]
toggles = [
    Toggle("default route removed", lambda: run(client_ip + ["route", "del", "default", "via", args.gateway]),
           lambda: run(client_ip + ["route", "replace", "default", "via", args.gateway])),
    Toggle("carrier lost", lambda: run(upstream_ip + ["link", "set", "v1", "down"]),
           lambda: run(upstream_ip + ["link", "set", "v1", "up"])),
    Toggle("internet blackholed", blackhole,
           lambda: run(["ip", "netns", "exec", args.upstream, "nft", "delete", "table", "inet", nft_table])),
    Toggle("notification server killed", kill_dunst, start_dunst),
    Toggle("tmux server killed", kill_tmux, start_tmux),
]
burst_count = 0
burst_lines = 0
MALFORMED = ['{"state": "sideways"}', "not json at all", '{"state": 3}', '{"interface": "eth0"}', '{"state": "offline"',
             '{"state": "online", "rtt_ms": "fast"}', "\x00\x01\x02", '{"state": "' + "x" * 5000 + '"}']


def exec_burst():
    """A burst of exec-monitor lines: random states, a few malformed lines."""
    global burst_count, burst_lines
    n = rng.randint(20, 400)
    lines = []
    for _ in range(n):
        if rng.random() < 0.03:
            lines.append(rng.choice(MALFORMED))
        else:
            lines.append(json.dumps({"state": rng.choice(["offline", "limited", "portal", "online"]),
                                     "interface": "v0", "reason": "soak burst", "rtt_ms": round(rng.uniform(1, 90), 1)}))
    if rng.random() < 0.5:  # half the bursts end on a state that holds past the debounce
        lines.append(json.dumps({"state": rng.choice(["limited", "portal", "online"]), "interface": "v0",
                                 "reason": "soak burst end"}))
    with open(feed_path, "a") as f:
        f.write("\n".join(lines) + "\n")
    burst_count += 1
    burst_lines += len(lines)


def lift_all():
    for t in toggles:
        t.lift()
    # The exec monitor's last word is fresh until the probe speaks again.
    with open(feed_path, "a") as f:
        f.write(json.dumps({"state": "online", "interface": "v0", "reason": "soak: faults lifted"}) + "\n")


# ---------------------------------------------------------------- the judge

def read_log():
    events = []
    for path in [log_path] + sorted(glob.glob(log_path + ".*")):
        with open(path) as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    # Sleep, wake and stop marks carry no sequence: transitions only.
                    if "mark" not in record:
                        events.append(record)
    events.sort(key=lambda e: e["sequence"])
    return events


HEADER = re.compile(r"^(signal|method call) time=([0-9.]+) .*member=(\w+)$")


def read_monitor():
    """StateChanged signals (time, sequence, state) and Notify calls (time, replaces_id, summary)."""
    with open(os.path.join(work, "monitor.log"), errors="replace") as f:
        text = f.read()
    signals, notifies = [], []
    blocks = re.split(r"\n(?=(?:signal|method call|method return|error) time=)", text)
    for block in blocks:
        lines = block.split("\n")
        m = HEADER.match(lines[0])
        if not m:
            continue
        t, member = float(m.group(2)), m.group(3)
        if member == "StateChanged":
            seq = re.search(r'^\s+string "sequence"\n\s+variant\s+uint64 (\d+)$', block, re.M)
            state = re.match(r'^\s+string "(\w+)"', lines[1]) if len(lines) > 1 else None
            if seq:
                signals.append((t, int(seq.group(1)), state.group(1) if state else "?"))
        elif member == "Notify":
            top = [l for l in lines[1:] if re.match(r"^   \S", l)]
            replaces = re.match(r"^   uint32 (\d+)$", top[1]) if len(top) > 1 else None
            summary = re.match(r'^   string "(.*)"$', top[3]) if len(top) > 3 else None
            notifies.append((t, int(replaces.group(1)) if replaces else -1, summary.group(1) if summary else "?"))
    return signals, notifies


def outages_of(events):
    """[(start_since_s, end_since_s or None)] from the published transitions."""
    outages, previous = [], "unknown"
    for e in events:
        if e["state"] != "online" and previous in ("online", "unknown"):
            outages.append([e["since"] / 1e6, None])
        elif e["state"] == "online" and outages and outages[-1][1] is None:
            outages[-1][1] = e["since"] / 1e6
        previous = e["state"]
    return outages


def judge():
    """Every invariant on what has been recorded so far: a list of (name, ok, detail)."""
    results = []
    events = read_log()
    seqs = [e["sequence"] for e in events]
    gaps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
    signals, notifies = read_monitor()
    missing = sorted({s for _, s, _ in signals} - set(seqs))
    results.append(("log", not missing and not gaps and (not seqs or seqs[0] == 1),
                    "%d lines (sequences %s–%s), %d StateChanged signals, missing from the log: %s, gaps: %s"
                    % (len(seqs), seqs[0] if seqs else "-", seqs[-1] if seqs else "-", len(signals),
                       missing[:10] or "none", gaps[:10] or "none")))

    outages = outages_of(events)
    starts = [o[0] for o in outages]
    new_toasts = [0] * len(outages)
    back_online = [0] * len(outages)
    stray = []
    for t, replaces, summary in notifies:
        if replaces != 0:
            continue
        i = max((k for k, s in enumerate(starts) if s <= t), default=None)
        if i is None:
            stray.append((t, summary))
        elif summary == "Back online":
            back_online[i] += 1
        else:
            new_toasts[i] += 1
    too_many = []
    for i, (start, _) in enumerate(outages):
        window_end = starts[i + 1] if i + 1 < len(starts) else float("inf")
        restarts = sum(1 for s in server_starts if start < s < window_end)
        if new_toasts[i] > 1 + restarts or back_online[i] > 1:
            too_many.append((i + 1, new_toasts[i], restarts, back_online[i]))
    updates = sum(1 for _, r, _ in notifies if r > 0)
    results.append(("toasts", not too_many and not stray,
                    "%d outages, %d Notify calls (%d new outage toasts, %d in-place updates, %d new \"Back online\"); "
                    "outages over the limit (outage, new toasts, server restarts in it, back online): %s; toasts outside an outage: %s"
                    % (len(outages), len(notifies), sum(new_toasts), updates, sum(back_online), too_many[:10] or "none",
                       stray[:5] or "none")))
    return results, events, signals, notifies


# ---------------------------------------------------------------- the run

samples = []  # (elapsed s, numbers)
checkpoints = []  # (elapsed s, numbers)
baseline = None
failures = []
started = time.monotonic()


def elapsed():
    return time.monotonic() - started


def alive():
    if daemon.poll() is not None:
        failures.append(("alive", "the daemon exited with %s at %.0f s" % (daemon.returncode, elapsed())))
        return False
    return True


def checkpoint(final=False):
    global baseline
    lift_all()
    online = wait_for(lambda: published_state() == "online", 120, 0.1)
    tmux_online = wait_for(lambda: "online" in run(["tmux", "-S", tmux_socket, "show-options", "-gv", "@lifeline"],
                                                   check=False).stdout, 10, 0.1)
    time.sleep(5)  # settle: the sinks have drained, short-lived threads have ended
    if not alive():
        return
    # The smallest of a few looks: a probe's socket or a hook's thread may be passing.
    looks = []
    for _ in range(4):
        looks.append(proc_numbers())
        time.sleep(0.5)
    numbers = {k: min(l[k] for l in looks) for k in ("fds", "threads")}
    numbers.update(rss=looks[-1]["rss"], anon=looks[-1]["anon"])
    checkpoints.append((elapsed(), numbers))
    status = []
    if not online:
        failures.append(("recovers", "still '%s' 120 s after every fault was lifted (at %.0f s)" % (published_state(), elapsed())))
    if not tmux_online:
        failures.append(("recovers", "tmux's @lifeline does not say online after the faults were lifted (at %.0f s)" % elapsed()))
    results, events, signals, _ = judge()
    for name, ok, detail in results:
        if not ok and not any(f[0] == name for f in failures):
            failures.append((name, detail))
    if baseline is None and (final or (elapsed() >= warmup and all(t.count > 0 for t in toggles) and burst_count > 0)):
        baseline = (elapsed(), numbers)
        status.append("baseline")
    elif baseline is not None:
        b = baseline[1]
        if abs(numbers["rss"] - b["rss"]) > RSS_SLACK_KB:
            failures.append(("memory", "VmRSS %d kB at %.0f s, baseline %d kB at %.0f s" % (numbers["rss"], elapsed(), b["rss"], baseline[0])))
        if numbers["fds"] > b["fds"]:
            failures.append(("fds", "%d open at %.0f s, baseline %d" % (numbers["fds"], elapsed(), b["fds"])))
        if numbers["threads"] > b["threads"]:
            failures.append(("threads", "%d at %.0f s, baseline %d" % (numbers["threads"], elapsed(), b["threads"])))
    print("  checkpoint %5.0f s: %s, %d transitions logged, %d signals; VmRSS %d kB, RssAnon %d kB, %d fds, %d threads %s"
          % (elapsed(), published_state(), len(events), len(signals), numbers["rss"], numbers["anon"], numbers["fds"],
             numbers["threads"], " ".join(status)), flush=True)


exit_code = 1
# Stopped from outside (soak.sh's cleanup): still end the daemon, dunst and tmux.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
try:
    start_dunst()
    start_tmux()
    if not wait_for(lambda: published_state() == "online", 30, 0.05):
        print("soak: the daemon did not say online within 30 s of starting; its log:", file=sys.stderr)
        print(open(os.path.join(work, "daemon.log")).read()[-3000:], file=sys.stderr)
        sys.exit(1)
    exe = os.readlink("/proc/%d/exe" % daemon.pid)
    print("soak: %s minutes, seed %d, daemon %s (pid %d, %s); warm-up %.0f s, a checkpoint every %.0f s"
          % (args.minutes, seed, args.bin, daemon.pid, os.path.basename(exe), warmup, checkpoint_every), flush=True)
    next_checkpoint = checkpoint_every
    first_steps = [t.flip for t in toggles] + [exec_burst]
    rng.shuffle(first_steps)
    while elapsed() < total and alive():
        if elapsed() >= next_checkpoint:
            checkpoint()
            next_checkpoint = elapsed() + checkpoint_every
            continue
        # Every kind of fault once first, in random order, so the warm-up has seen them all.
        step = first_steps.pop() if first_steps else (exec_burst if rng.random() < 0.25 else rng.choice(toggles).flip)
        step()
        hold = rng.uniform(0.2, 1.8) if rng.random() < 0.5 else rng.uniform(2.5, 12)
        deadline = time.monotonic() + min(hold, max(0.0, total - elapsed()))
        while time.monotonic() < deadline:
            samples.append((elapsed(), proc_numbers()))
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    if alive():
        checkpoint(final=True)
    if alive():
        daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(15)
            if code != 0:
                failures.append(("alive", "the daemon exited with %d on SIGTERM" % code))
        except subprocess.TimeoutExpired:
            failures.append(("alive", "the daemon did not exit within 15 s of SIGTERM"))

    results, events, signals, notifies = judge()
    for name, ok, detail in results:
        if not ok and not any(f[0] == name for f in failures):
            failures.append((name, detail))
    rss = [n["rss"] for _, n in samples]
    print("\nsoak summary (%.1f minutes, seed %d, %s)" % (elapsed() / 60, seed, args.bin))
    print("  faults applied: %s; %d exec bursts (%d lines)"
          % (", ".join("%s %d×" % (t.name, t.count) for t in toggles), burst_count, burst_lines))
    for name, ok, detail in results:
        print("  %-8s %s" % (name, detail))
    if baseline and baseline[0] == checkpoints[-1][0]:
        print("  (too short to judge memory, fds and threads: no checkpoint after the warm-up's)")
    if baseline:
        b = baseline[1]
        last = checkpoints[-1][1]
        print("  memory   VmRSS baseline %d kB (at %.0f s) -> last checkpoint %d kB; over the run %d–%d kB; RssAnon %d -> %d kB"
              % (b["rss"], baseline[0], last["rss"], min(rss or [0]), max(rss or [0]), b["anon"], last["anon"]))
        print("  fds      baseline %d, checkpoints %s" % (b["fds"], [n["fds"] for _, n in checkpoints]))
        print("  threads  baseline %d, checkpoints %s" % (b["threads"], [n["threads"] for _, n in checkpoints]))
    if failures:
        print("\nINVARIANTS BROKEN:")
        for name, detail in failures:
            print("  %-8s %s" % (name, detail))
        print("  (daemon log: %s; SOAK_KEEP=1 keeps it; SOAK_SEED=%d repeats the faults)" % (os.path.join(work, "daemon.log"), seed))
    else:
        print("all invariants held")
        exit_code = 0
finally:
    if daemon.poll() is None:
        daemon.kill()
        daemon.wait()
    if dunst is not None:
        dunst.kill()
        dunst.wait()
    kill_tmux()
sys.exit(exit_code)
