#!/usr/bin/env python3
"""Wake-ups of every thread of a process over a window, per thread name, split
into probe rounds and the time between them.

usage: idle_wakeups.py PID SECONDS LOGFILE [INTERVAL_MS]

Every INTERVAL_MS (default 100) it reads each thread's voluntary and
involuntary context switches (/proc/PID/task/TID/status; a thread that sleeps
and is woken again counts one voluntary switch). Reading /proc does not wake
the process. A thread started during the window counts from 0; one that ended
counts what it did until the last sample that saw it; threads that came or
went are listed (their wake-ups may hide between two samples).

A probe round runs from the sample in which the daemon logged that a probe
starts ("probing (" in LOGFILE, its debug log), widened by one sample before
(the timer that starts it), to 0.5 s after the sample in which it logged the
verdict ("probe ("): the state file, D-Bus and the tray are written then.
Every other wake-up is "outside probe rounds": what the daemon does while
nothing is probed.
"""
import os, sys, time

pid, window, logfile = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
interval = (int(sys.argv[4]) if len(sys.argv) > 4 else 100) / 1000
base = "/proc/%d/task" % pid


def probe_marks():
    """How many probes the log says have started and ended so far."""
    started = ended = 0
    try:
        with open(logfile, errors="replace") as f:
            for line in f:
                started += "probing (" in line
                ended += "probe (" in line
    except OSError:
        pass
    return started, ended


def sample():
    out = {}
    try:
        tasks = os.listdir(base)
    except OSError:
        return out
    for tid in tasks:
        try:
            with open("%s/%s/comm" % (base, tid)) as f:
                name = f.read().strip()
            vol = inv = None
            with open("%s/%s/status" % (base, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        vol = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        inv = int(line.split()[1])
            if vol is not None:
                out[tid] = (name, vol, inv or 0)
        except OSError:
            pass  # the thread ended meanwhile
    return out


samples = []  # (time, {tid: (name, vol, inv)})
marks = []  # (probes started, probes ended) at each sample
start = time.monotonic()
samples.append((0.0, sample()))
marks.append(probe_marks())
while True:
    next_at = start + len(samples) * interval
    if next_at - start > window:
        break
    time.sleep(max(0, next_at - time.monotonic()))
    samples.append((time.monotonic() - start, sample()))
    marks.append(probe_marks())

# Per interval i (between samples i-1 and i): each thread's new switches.
deltas = []  # (t0, t1, {tid: (name, dvol, dinv)})
last = {tid: (v[1], v[2]) for tid, v in samples[0][1].items()}
names = {tid: v[0] for tid, v in samples[0][1].items()}
for i in range(1, len(samples)):
    t0, t1, now = samples[i - 1][0], samples[i][0], samples[i][1]
    d = {}
    for tid, (name, vol, inv) in now.items():
        pv, pi = last.get(tid, (0, 0))
        if vol - pv or inv - pi:
            d[tid] = (name, vol - pv, inv - pi)
        last[tid] = (vol, inv)
        names[tid] = name
    deltas.append((t0, t1, d))

# Probe rounds: from the interval in which one started (one more before: its
# timer) to 0.5 s after the interval in which its verdict was logged. A round
# already under way when the window opens starts with it.
rounds = []
open_round = 0.0 if marks[0][0] > marks[0][1] else None
for i in range(1, len(samples)):
    t0, t1 = samples[i - 1][0], samples[i][0]
    if marks[i][0] > marks[i - 1][0] and open_round is None:
        open_round = t0 - interval
    if marks[i][1] > marks[i - 1][1] and open_round is not None:
        rounds.append((open_round, t1 + 0.5))
        open_round = None if marks[i][0] <= marks[i][1] else t1
if open_round is not None:
    rounds.append((open_round, samples[-1][0]))


def in_round(t0, t1):
    return any(t0 < b and t1 > a for a, b in rounds)


threads, vol, inv, inside = {}, {}, {}, {}
for tid, name in names.items():
    threads[name] = threads.get(name, 0) + 1
    vol.setdefault(name, 0), inv.setdefault(name, 0), inside.setdefault(name, 0)
for t0, t1, d in deltas:
    r = in_round(t0, t1)
    for tid, (name, dv, di) in d.items():
        vol[name] += dv
        inv[name] += di
        if r:
            inside[name] += dv

print("   %-34s %7s %10s %10s %8s %12s" % ("thread", "threads", "voluntary", "in rounds", "outside", "involuntary"))
for name in sorted(threads, key=lambda n: (-vol[n], n)):
    label = name
    # libdispatch names its threads after their queue; comm keeps the last 15 characters.
    if name == "oot.default-qos":
        label += " (Swift pool)"
    elif name == "-qos.overcommit":
        label += " (dispatch)"
    print("   %-34s %7d %10d %10d %8d %12d" % (label, threads[name], vol[name], inside[name], vol[name] - inside[name], inv[name]))
total = sum(vol.values())
during = sum(inside.values())
outside = total - during
print("   %-34s %7s %10d   = %.1f per 30 s interval, %.2f per second" % ("all", "", total, total * 30 / window, total / window))
spans = ", ".join("%.1f s" % (b - a) for a, b in rounds)
per_round = "%.1f per probe round" % (during / len(rounds)) if rounds else "no probe round"
print("   probe rounds seen: %d (%s); in them %d wake-ups, %s" % (len(rounds), spans or "none", during, per_round))
print("   outside probe rounds: %d = %.1f per 30 s interval" % (outside, outside * 30 / window))
first, last = set(samples[0][1]), set(samples[-1][1])
churn = sorted(set(names) - (first & last))
if churn:
    print("   threads that came or went: %s" % ", ".join("%s (%s)" % (names[t], t) for t in churn))
