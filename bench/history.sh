#!/usr/bin/env bash
# `lifeline history` on the largest log the default settings keep: the current
# file and 5 rotated ones of 1 MiB each (≈ 6 MiB, ≈ 30k transitions, an outage
# every 20 minutes for most of a year): the list, the week chart, a year's
# chart and the JSON.
# Run by `make bench` after the release build (--static-swift-stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/.build/release/lifeline

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lifeline" "$work/config"
log=$work/state/lifeline/events.jsonl

# One file of about 1 MiB per rotation, oldest (.5) first, as the log sink rotates.
python3 - "$log" <<'PY'
import sys
path = sys.argv[1]
now = 1_774_958_709_000_000
line = ('{"state":"%s","previous":"%s","since":%d,"interface":"wlan0","kind":"wifi",'
        '"reason":"probe to http://nmcheck.gnome.org/check_network_status.txt timed out after 5s",'
        '"rtt_ms":-1,"metered":false,"sequence":%d}\n')
per_file = 1 << 20
names = [f"{path}.{n}" for n in range(5, 0, -1)] + [path]
count = 0
for name in names:
    with open(name, "w") as f:
        size = 0
        while size < per_file - 400:
            count += 1
            down = count % 2 == 1
            # A 16-digit stand-in for the time, replaced below by one as long.
            text = line % ("limited" if down else "online", "online" if down else "limited", 10**15, count)
            size += len(text)
            f.write(text)
# Times: 10 minutes apart, ending an hour before "now".
step = 600_000_000
first = now - 3_600_000_000 - count * step
n = 0
for name in names:
    lines = open(name).read().splitlines(keepends=True)
    with open(name, "w") as f:
        for text in lines:
            n += 1
            f.write(text.replace('"since":%d,' % 10**15, '"since":%d,' % (first + n * step)))
print(f"{count} transitions in {len(names)} files", file=sys.stderr)
PY
ls -l "$work/state/lifeline"

export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run TZ=UTC
echo "-- history on the full default log"
hyperfine -N --warmup 3 --runs 30 --style basic \
  "$bin history" \
  "$bin history --chart --now 1774958709" \
  "$bin history --chart --since 365d --now 1774958709" \
  "$bin history --json"
