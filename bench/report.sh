#!/usr/bin/env bash
# `lifeline history --report` on a log of 100,000 transitions (an outage of a
# few minutes every 10 minutes or so, a sleep every day or so, a restart every
# week or so: about two years), in one file: the page of the last 30 days (the
# default), and the page of everything. Goal: under a second for the default page.
# Run by `make bench` after the release build (--static-swift-stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lifeline" "$work/config"
log=$work/state/lifeline/events.jsonl
now=1774958709

python3 - "$log" "$now" <<'PY'
import random, sys
path, now = sys.argv[1], int(sys.argv[2]) * 1_000_000
random.seed(33)
layers = ["link", "carrier", "address", "route", "gateway", "dns", "tcp", "tls", "http", "portal"]
line = ('{"state":"%s","previous":"%s","since":%d,"interface":"wlan0","kind":"wifi",'
        '"reason":"probe to http://nmcheck.gnome.org/check_network_status.txt timed out after 5s",'
        '"rtt_ms":-1,"metered":false,"sequence":%d,"connection":"Home","diagnosis":"%s","families":{}}\n')
transitions = 100_000
step = 10 * 60_000_000
t = now - (transitions + 10) * step
out, seq, previous = [], 0, "unknown"
while seq < transitions:
    seq += 1
    if seq % 2 == 0:
        layer = random.choice(layers)
        state = "portal" if layer == "portal" else "offline" if layer in layers[:4] else "limited"
        out.append(line % (state, previous, t, seq, layer)); previous = state
        t += random.randint(10, 600) * 1_000_000
    else:
        out.append(line % ("online", previous, t, seq, "")); previous = "online"
        t += step
        if seq % 143 == 1:
            out.append('{"mark":"sleep","since":%d}\n' % t)
            out.append('{"mark":"wake","since":%d,"asleep_since":%d}\n' % (t + 6 * 3_600_000_000, t)); t += 6 * 3_600_000_000
        if seq % 1001 == 1:
            out.append('{"mark":"stop","since":%d}\n' % t); t += 3_600_000_000; previous = "unknown"
open(path, "w").writelines(out)
print(f"{transitions} transitions, {len(out) - transitions} marks, {sum(map(len, out)) >> 20} MiB", file=sys.stderr)
PY

export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run TZ=UTC
"$bin" history --report "$work/last30.html" --now $now >/dev/null
"$bin" history --report "$work/all.html" --since 36500d --now $now >/dev/null
echo "pages: last 30 days $(stat -c %s "$work/last30.html") bytes, everything $(stat -c %s "$work/all.html") bytes"
echo "-- history --report on 100,000 transitions"
hyperfine -N --warmup 2 --runs 15 --style basic --export-json "$work/times.json" \
  "$bin history --report $work/last30.html --now $now" \
  "$bin history --report $work/all.html --since 36500d --now $now"
if [ -n "${BENCH_RESULTS:-}" ]; then
  python3 - "$work/times.json" >>"$BENCH_RESULTS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
for label, x in zip(["`history --report`, 100,000 transitions, last 30 days", "`history --report`, 100,000 transitions, everything (2 years)"], r):
    print("%s\t%.0f ± %.0f\tms mean\t%s" % (label, x["mean"] * 1000, x["stddev"] * 1000, "< 1 s" if "30" in label else "—"))
PY
fi
