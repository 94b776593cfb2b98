#!/usr/bin/env python3
"""The one table of `make bench`: every headline number of every bench/*.sh,
with the machine and the date, printed and written into docs/benchmarks.md
between the bench-table markers.

usage: bench-table.py OUT_DIR [MARKDOWN_FILE]

OUT_DIR holds what `make bench` saved per script: NAME.txt (its output) and,
optionally, NAME.tsv: lines "key<TAB>value<TAB>unit<TAB>goal" a script appends
to the file named by $BENCH_RESULTS, for numbers no line below reads. The rows
below read each script's own summary lines, so the scripts stay readable on
their own; a line that no longer matches shows as "not found" in the table and
is named on stderr, so a changed script cannot drop a number silently.
"""
import datetime, os, platform, re, statistics, subprocess, sys

out_dir = sys.argv[1]
markdown = sys.argv[2] if len(sys.argv) > 2 else None
BEGIN, END = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"
missing = []


def output(script):
    try:
        with open(os.path.join(out_dir, script + ".txt"), errors="replace") as f:
            return f.read()
    except OSError:
        return None


def num(text):
    return float(text.replace(",", ""))


def ms(x):
    return "%.2f ms" % x if x < 10 else "%.1f ms" % x


def seconds(x_ms):
    return "%.1f s" % (x_ms / 1000)


def section(text, heading):
    """The lines after a line starting with `heading`, up to the next "-- " heading."""
    start = text.find(heading)
    if start < 0:
        return ""
    rest = text[start + len(heading):]
    end = rest.find("\n-- ")
    return rest if end < 0 else rest[:end]


def hyperfine(text):
    """{command: (mean, sigma, unit)} from hyperfine's basic style."""
    found = {}
    for m in re.finditer(r"Benchmark \d+: (.*)\n\s+Time \(mean ± σ\):\s+([\d.]+) (\w+) ±\s+([\d.]+) (\w+)", text):
        found[m.group(1).strip()] = (float(m.group(2)), float(m.group(4)), m.group(3))
    return found


def quality_sample(connections):
    """bench/quality.sh: "connections N: per sample X µs CPU, Y voluntary switches (…)"."""
    return regex(r"^connections %d: per sample ([\d.]+) µs CPU, ([\d.]+) voluntary switches" % connections,
                 lambda cpu, switches: "%s µs CPU, %s wake-ups per sample" % (cpu, switches))


def quality_daemon(text):
    """bench/quality.sh: the daemon's CPU, wake-ups and memory without and with the quality reading."""
    found = dict(re.findall(r"^quality=(false|true): (cpu \d+ ms in \d+ s, wake-ups \d+, VmRSS \d+ kB)", text, re.M))
    if "false" not in found or "true" not in found:
        return None
    return "%s → %s" % (found["false"], found["true"])


# Each row: (area, measure, goal, script, reader). A reader takes the script's
# output and returns the cell, or None when its line is not there.
def rounds_probe(which):
    def read(text):
        pairs = [(int(a), int(b)) for a, b in re.findall(r"round \d+: limited after\s+(\d+) ms, online again after\s+(\d+) ms", text)]
        if not pairs:
            return None
        xs = sorted(p[which] for p in pairs)
        median = " median %s," % seconds(statistics.median(xs)) if which == 1 else ""
        return "%.1f–%.1f s,%s %d rounds" % (xs[0] / 1000, xs[-1] / 1000, median, len(xs))
    return read


def regex(pattern, fmt):
    def read(text):
        m = re.search(pattern, text, re.M)
        return fmt(*m.groups()) if m else None
    return read


def gnm(scenario, side):
    """Lifeline's (side 0), GNetworkMonitor's (side 1) or, through Lifeline's GIO
    module, a GLib application's (side 2) first correct and signals in the
    side-by-side table."""
    def read(text):
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) in (8, 11) and cells[0] == scenario and 2 + 3 * side + 2 < len(cells):
                first, signals, verdict = cells[2 + 3 * side], cells[3 + 3 * side], cells[4 + 3 * side]
                first = re.sub(r"(\d+) ms", lambda m: "%.1f s" % (int(m.group(1)) / 1000) if int(m.group(1)) >= 1000 else m.group(0), first)
                first = "" if first.startswith("—") else first + "; "
                return "%s%s signals (spurious), verdict %s" % (first, signals, verdict)
        return None
    return read


def pair(text, scenario):
    glib, app = gnm(scenario, 1)(text), gnm(scenario, 2)(text)
    return "%s → %s" % (glib, app) if glib and app else None


def gio_memory(text):
    m = re.search(r"the module adds to an application: RSS ([+-]\d+) kB, PSS ([+-]\d+) kB", text)
    return "RSS %s kB, PSS %s kB (against GLib's netlink monitor)" % (m.group(1), m.group(2)) if m else None


def first_verdict(outage):
    """`bench/endpoints.sh`'s medians to the first verdict, staggered and (when measured) sequential."""
    def read(text):
        found = {}
        for m in re.finditer(r"^(staggered|sequential)\s+%s\s+(\d+);" % re.escape(outage), section(text, "-- the first verdict"), re.M):
            found[m.group(1)] = seconds(int(m.group(2)))
        if "staggered" not in found:
            return None
        return found["staggered"] + ("; %s one after another" % found["sequential"] if "sequential" in found else "")
    return read


def captive_api(path):
    """`bench/captive-api.sh`'s median from the portal starting to `portal` published, for one path."""
    def read(text):
        part = section(text, "-- time from the portal starting")
        m = re.search(r"^%s\s+(\d+);" % re.escape(path), part, re.M)
        return seconds(int(m.group(1))) if m else None
    return read


def idle_threads(heading):
    def read(text):
        part = section(text, heading)
        m = re.search(r"^\s+all\s+(\d+)\s+= ([\d.]+) per 30 s interval, ([\d.]+) per second", part, re.M)
        if not m:
            return None
        cell = "%s per 30 s probe interval (%s/s)" % (m.group(2), m.group(3))
        outside = re.search(r"^\s+outside probe rounds: \d+ = ([\d.]+) per 30 s interval", part, re.M)
        rounds = re.search(r"^\s+probe rounds seen: .*, ([\d.]+) per probe round", part, re.M)
        if outside and rounds:
            cell += "; %s outside probe rounds, %s per probe round" % (outside.group(1), rounds.group(1))
        return cell
    return read


def idle_memory(heading):
    def read(text):
        part = section(text, heading)
        kb = {k: int(v) for k, v in re.findall(r"^\s+(VmRSS|RssAnon|Pss):\s+(\d+) kB", part, re.M)}
        if "VmRSS" not in kb:
            return None
        return "RSS %.1f MB, PSS %.1f MB, anonymous %.1f MB" % (kb["VmRSS"] / 1024, kb.get("Pss", 0) / 1024, kb.get("RssAnon", 0) / 1024)
    return read


def core_memory(heading):
    def read(text):
        part = section(text, heading)
        rss = re.search(r"VmRSS (\d+) kB", part)
        pss = re.search(r"Pss: (\d+) kB", part)
        return "RSS %.1f MB, PSS %.1f MB" % (int(rss.group(1)) / 1024, int(pss.group(1)) / 1024 if pss else 0) if rss else None
    return read


def hyperfine_row(command_part):
    def read(text):
        for command, (mean, sigma, unit) in hyperfine(text).items():
            if command_part in command:
                return "%.1f ± %.1f %s mean" % (mean, sigma, unit)
        return None
    return read


def watch_row(label):
    def read(text):
        m = re.search(r"^%s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)" % re.escape(label), text, re.M)
        return "RSS %s MB, PSS %s MB, %s wake-ups in 30 s" % (m.group(1), m.group(2), m.group(4)) if m else None
    return read


def dbus_bench(what):
    return regex(re.escape(what) + r": n=\d+ p50=([\d.]+) ms p95=([\d.]+) ms p99=([\d.]+) ms max=([\d.]+) ms",
                 lambda p50, p95, p99, mx: "p50 %s ms, p95 %s ms, p99 %s ms" % (p50, p95, p99))


def p50_p95_max(label):
    # p99 is printed where the run is long enough for it to differ from the maximum.
    return regex(re.escape(label) + r"\s+p50\s+([\d.]+) ms\s+p95\s+([\d.]+) ms(?:\s+p99\s+([\d.]+) ms)?\s+max\s+([\d.]+) ms",
                 lambda a, b, c, d: "p50 %s ms, p95 %s ms, %smax %s ms" % (a, b, "p99 %s ms, " % c if c else "", d))


def toast_server(name):
    return regex(r"\b" + re.escape(name) + r"\s+published -> Notify reply\s+p50\s+([\d.]+) ms\s+p99\s+([\d.]+) ms\s+max\s+([\d.]+) ms",
                 lambda a, b, c: "p50 %s ms, p99 %s ms, max %s ms" % (a, b, c))


ROWS = [
    ("detection", "internet lost (nftables blackhole), traffic flowing → `limited` published", "≤ 8 s", "gnetworkmonitor",
     gnm("blackhole, traffic flowing", 0)),
    ("detection", "the same in `bench/probe.sh`'s lab (netlink and probe monitors, 20 UDP packets/s)", "—", "probe", rounds_probe(0)),
    ("detection", "internet lost, idle machine → `limited` published", "≤ 35 s", "gnetworkmonitor", gnm("blackhole, idle", 0)),
    ("detection", "default route removed → `offline` published (debounce 2 s)", "—", "gnetworkmonitor", gnm("default route removed", 0)),
    ("detection", "kernel route change → state decided (debounce 0)", "p50 ≤ 1 ms, p95 ≤ 5 ms", "netlink",
     regex(r"latency kernel change -> published .*: p50 ([\d.]+) ms, p95 ([\d.]+) ms, max ([\d.]+) ms",
           lambda a, b, c: "p50 %s ms, p95 %s ms, max %s ms" % (a, b, c))),
    ("detection", "carrier lost on the peer: Lifeline", "offline", "gnetworkmonitor", gnm("carrier lost on the peer", 0)),
    ("detection", "carrier lost on the peer: GNetworkMonitor", "offline", "gnetworkmonitor", gnm("carrier lost on the peer", 1)),
    ("detection", "default route removed: GNetworkMonitor", "offline", "gnetworkmonitor", gnm("default route removed", 1)),
    ("detection", "internet blackholed, traffic flowing: GNetworkMonitor", "limited", "gnetworkmonitor",
     gnm("blackhole, traffic flowing", 1)),
    ("detection", "first verdict on a new path, first endpoint blackholed (staggered; sequential)", "—", "endpoints",
     first_verdict("blackholed")),
    ("detection", "first verdict on a new path, first endpoint refused (staggered; sequential)", "—", "endpoints",
     first_verdict("refused")),
    ("detection", "first verdict on a new path, every endpoint dark (staggered; sequential)", "—", "endpoints",
     first_verdict("all-dark")),
    ("detection", "a portal that announces its API (RA option 37) → `portal` published", "≤ 3 s", "captive-api",
     captive_api("announced (RA option 37, API)")),
    ("detection", "the same portal, probe only (the check redirected) → `portal` published", "—", "captive-api",
     captive_api("probe only (the check redirected)")),
    ("recovery", "blackhole lifted, traffic flowing → `online` published", "≤ 2 s", "gnetworkmonitor",
     gnm("blackhole lifted, traffic flowing", 0)),
    ("recovery", "the same in `bench/probe.sh`'s lab (netlink and probe monitors, 20 UDP packets/s)", "≤ 2 s", "probe", rounds_probe(1)),
    ("recovery", "blackhole lifted, idle machine → `online` published", "≤ 2 s", "gnetworkmonitor", gnm("blackhole lifted, idle", 0)),
    ("churn", "1000 veth pairs created and deleted: daemon CPU, state changes", "≤ 0.5 CPU-s, 0", "netlink",
     regex(r"churn of (\d+) veth pairs .*: daemon CPU ([\d.]+) s, state changes (\d+), overflows (\d+)",
           lambda n, cpu, changes, over: "%s CPU-s, %s state changes, %s overflows" % (cpu, changes, over))),
    ("churn", "150 veth pairs: Lifeline signals", "0", "gnetworkmonitor", gnm("150 veth pairs created and deleted", 0)),
    ("churn", "150 veth pairs: GNetworkMonitor signals", "—", "gnetworkmonitor", gnm("150 veth pairs created and deleted", 1)),
    ("churn", "docker-style bridge with an address and a route: Lifeline signals", "0", "gnetworkmonitor",
     gnm("docker-style bridge, address and route", 0)),
    ("churn", "docker-style bridge: GNetworkMonitor signals", "—", "gnetworkmonitor", gnm("docker-style bridge, address and route", 1)),
    ("churn", "50 default-route flaps in 10 s: Lifeline signals", "one outage or none", "gnetworkmonitor",
     gnm("50 default route flaps in 10 s", 0)),
    ("churn", "50 default-route flaps in 10 s: GNetworkMonitor signals", "—", "gnetworkmonitor", gnm("50 default route flaps in 10 s", 1)),
    ("applications", "route lost: GLib's monitor → with Lifeline's GIO module", "offline", "gnetworkmonitor",
     lambda t: pair(t, "default route removed")),
    ("applications", "carrier lost: GLib's monitor → with the module", "offline", "gnetworkmonitor",
     lambda t: pair(t, "carrier lost on the peer")),
    ("applications", "internet blackholed, idle: GLib's monitor → with the module", "limited", "gnetworkmonitor",
     lambda t: pair(t, "blackhole, idle")),
    ("applications", "check server down: GLib's monitor → with the module", "limited", "gnetworkmonitor",
     lambda t: pair(t, "check server down")),
    ("applications", "150 veth pairs: GLib's monitor → with the module", "0 signals", "gnetworkmonitor",
     lambda t: pair(t, "150 veth pairs created and deleted")),
    ("applications", "published → `notify::connectivity` in an application (GIO module)", "—", "gnetworkmonitor",
     dbus_bench("publish -> notify::connectivity, Lifeline's GIO module")),
    ("applications", "route change → `network-changed` (GLib's netlink monitor)", "—", "gnetworkmonitor",
     dbus_bench("kernel route change -> network-changed, GLib's netlink monitor")),
    ("applications", "memory the GIO module adds to an application", "—", "gnetworkmonitor", gio_memory),
    ("idle", "daemon memory, embedded defaults, online", "RSS ≤ 16 MB", "memory", idle_memory("-- lifeline daemon (pid")),
    ("idle", "the same at the debug log level (the wake-up run)", "—", "idle", idle_memory("-- online, idle")),
    ("idle", "daemon memory, log sink only", "—", "core", core_memory("-- idle daemon: log sink only")),
    ("idle", "wake-ups (voluntary context switches, all threads), online", "≤ 2 per probe interval", "idle",
     idle_threads("-- online, idle")),
    ("idle", "wake-ups, limited (blackholed), after the outage's first minute", "≤ 2 per probe interval", "idle", idle_threads("-- limited")),
    ("quality", "one quality sample, 10 open connections: CPU, wake-ups", "no extra wake-up", "quality", quality_sample(10)),
    ("quality", "one quality sample, 100 open connections", "—", "quality", quality_sample(100)),
    ("quality", "one quality sample, 1000 open connections", "—", "quality", quality_sample(1000)),
    ("quality", "daemon, 100 connections uploading: `quality = false` → `true`", "—", "quality", quality_daemon),
    ("idle", "probe requests while idle and online", "≤ 1 per 30 s", "probe",
     regex(r"(\d+) requests in (\d+) s", lambda n, s: "%s in %s s" % (n, s))),
    ("idle", "tmux sink with one server, idle: context switches in 10 s", "0 more than without", "tmux-servers",
     regex(r"without the tmux sink: (\d+) context switches in 10 s.*\n.*with the tmux sink and one tmux server: (\d+) context switches",
           lambda without, with_sink: "%s (%s without the sink)" % (with_sink, without))),
    ("status", "`lifeline status --format '{icon} {state}'` (whole process)", "≤ 2 ms mean", "tmux",
     regex(r"status: mean ([\d.]+) ms, median ([\d.]+) ms, min ([\d.]+) ms", lambda a, b, c: "%s ms mean, %s ms median" % (a, b))),
    ("status", "`lifeline check` (whole process, D-Bus)", "—", "dbus", hyperfine_row("check")),
    ("status", "`lifeline watch` (front binary), 30 s unchanged", "RSS ≤ 8 MB, no wake-up", "watch",
     watch_row("lifeline watch (front)")),
    ("latency", "published → `StateChanged` at a subscriber", "p95 ≤ 2 ms", "dbus",
     dbus_bench("publish -> StateChanged at a subscriber process (dbus-monitor)")),
    ("latency", "`GetStatus()` round trip", "—", "dbus", dbus_bench("GetStatus() round trip")),
    ("latency", "published → Notify at dunst", "—", "notify", p50_p95_max("published -> Notify received by dunst")),
    ("latency", "published → toast on screen (dunst window viewable)", "p99 ≤ 20 ms", "notify",
     p50_p95_max("published -> dunst window viewable")),
    ("latency", "published → dunst's reply to Notify", "—", "toast-servers", toast_server("dunst")),
    ("latency", "published → mako's reply to Notify", "—", "toast-servers", toast_server("mako")),
    ("latency", "published → swaync's reply to Notify", "—", "toast-servers", toast_server("swaync")),
    ("latency", "published → gnome-shell's reply to Notify", "—", "toast-servers", toast_server("gnome-shell")),
    ("latency", "published → Plasma's reply to Notify", "—", "toast-servers", toast_server("plasma")),
    ("latency", "published → `StateChanged` while the notification server hangs (SIGSTOP)", "p95 ≤ 2 ms", "notify-hang",
     lambda text: p50_p95_max("published -> StateChanged at dbus-monitor")(section(text, "dunst stopped"))),
    ("latency", "published → tmux `@lifeline` set", "≤ 20 ms", "tmux",
     regex(r"push: n=\d+ median ([\d.]+) ms, p90 ([\d.]+) ms, max ([\d.]+) ms", lambda a, b, c: "median %s ms, p90 %s ms, max %s ms" % (a, b, c))),
    ("latency", "new tmux server → `@lifeline` set", "≤ 100 ms", "tmux-servers",
     regex(r"new server: n=\d+ median ([\d.]+) ms, p90 ([\d.]+) ms, max ([\d.]+) ms", lambda a, b, c: "median %s ms, p90 %s ms, max %s ms" % (a, b, c))),
    ("latency", "NetworkManager `Connectivity` → event-log line", "—", "networkmanager",
     regex(r"event-log line, \d+ changes: median ([\d.]+) ms, p95 ([\d.]+) ms, max ([\d.]+) ms", lambda a, b, c: "median %s ms, p95 %s ms" % (a, b))),
    ("latency", "observation → 1st of 10 hooks running", "—", "hooks",
     regex(r"hook 01: median ([\d.]+) ms, p95 ([\d.]+) ms", lambda a, b: "median %s ms, p95 %s ms" % (a, b))),
    ("latency", "online → `wait-online` exited", "—", "wait-online",
     regex(r"wait-online: .* median ([\d.]+) ms, max ([\d.]+) ms", lambda a, b: "median %s ms, max %s ms" % (a, b))),
    ("latency", "cold `GetStatus()` through D-Bus activation", "—", "activation",
     regex(r"cold GetStatus\(\) through activation, \d+ rounds: median ([\d.]+) ms", lambda a: "median %s ms" % a)),
]


def throughput_rows():
    text = output("core") or ""
    rows = []
    for label, rate in re.findall(r"^\s+(.+?): ([\d,]+) observations/s", text, re.M):
        rows.append(("throughput", "bus: " + label, "—", "core", "%.2f M obs/s" % (num(rate) / 1e6)))
    if not rows:
        rows.append(("throughput", "bus throughput", "—", "core", None))
    return rows


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    distro = "?"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        swift = re.sub(r"\s*\(.*", "", swift)
    except (OSError, IndexError):
        swift = "?"
    load = ""
    try:
        with open(os.path.join(out_dir, "loadavg")) as f:
            load = ", load average %s at the start" % " ".join(f.read().split()[:3])
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) / 1024 / 1024
    return "%s, %d cores, %.0f GiB, %s, kernel %s, %s%s" % (cpu, os.cpu_count(), mem, distro, platform.release(), swift, load)


def table():
    rows = []
    for area, measure, goal, script, read in ROWS:
        text = output(script)
        cell = read(text) if text is not None else None
        rows.append((area, measure, goal, script, cell))
    rows += throughput_rows()
    # Numbers a script wrote itself ($BENCH_RESULTS).
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(".tsv"):
            for line in open(os.path.join(out_dir, name)):
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2 and parts[0]:
                    unit = parts[2] if len(parts) > 2 else ""
                    rows.append(("other", parts[0], parts[3] if len(parts) > 3 else "—", name[:-4], (parts[1] + " " + unit).strip()))
    lines = ["Written by `make bench` on %s UTC: %s. Release build (`make release`); each script's"
             % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), machine()),
             "method is below, its full output in `.build/bench`.", "",
             "| area | measure | result | goal | script |", "|---|---|---|---|---|"]
    for area, measure, goal, script, cell in rows:
        if cell is None:
            ran = output(script) is not None
            missing.append("%s: %s (%s)" % (script, measure, "its summary line was not found" if ran else "did not run"))
            cell = "not found" if ran else "not run"
        lines.append("| %s | %s | %s | %s | `bench/%s.sh` |" % (area, measure, cell, goal, script))
    return "\n".join(lines) + "\n"


def write_into(path, text):
    with open(path) as f:
        doc = f.read()
    block = BEGIN + "\n" + text + END
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n## The whole table (`make bench`)\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


text = table()
sys.stdout.write(text)
if markdown:
    write_into(markdown, text)
for m in missing:
    print("bench-table: no number for %s" % m, file=sys.stderr)
