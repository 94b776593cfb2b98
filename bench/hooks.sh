#!/usr/bin/env bash
# Hook scripts (the exec sink): (1) time from an observation to a hook's first
# command running, with 1 hook and with 10 (the 10th to start); (2) the daemon's
# memory and the read rate while a hook prints 1 GB; (3) threads with and
# without hooks. Debounce 0, so (1) is the bus, the sink, the folder scan, the
# permission check, posix_spawn and /bin/sh starting.
# Uses .build/release/lifeline (make release), or $LIFELINE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
[[ -x $bin ]] || { echo "build it first: make release" >&2; exit 1; }

work=$(mktemp -d /tmp/lifeline-bench-hooks.XXXXXX)
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/no-bus LIFELINE_LOG_LEVEL=debug
hooks=$XDG_CONFIG_HOME/lifeline/hooks.d
mkdir -p "$hooks" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
daemon=
cleanup() {
  [[ -n $daemon ]] && stop_daemon
  [[ -n ${KEEP:-} ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

mkfifo "$work/fifo"
printf '#!/bin/sh\nwhile :; do cat %q; done\n' "$work/fifo" > "$work/monitor.sh"
chmod 700 "$work/monitor.sh"
cat > "$XDG_CONFIG_HOME/lifeline/config.toml" <<TOML
[debounce]
down = "0s"
up = "0s"

[[monitor]]
kind = "exec"
command = ["$work/monitor.sh"]

[[sink]]
kind = "log"

[[sink]]
kind = "exec"
timeout = "60s"
TOML

start_daemon() {
  "$bin" daemon 2>"$work/daemon.log" &
  daemon=$!
  for _ in $(seq 500); do [[ -e $XDG_RUNTIME_DIR/lifeline/state.json ]] && return; sleep 0.01; done
  echo "daemon did not start:"; cat "$work/daemon.log"; exit 1
}
# The monitor's `cat` outlives its shell when the daemon stops it; an empty write
# ends it, so it neither steals the next daemon's first line nor stays behind.
stop_daemon() {
  kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=
  timeout 1 sh -c ": > '$work/fifo'" || true
}
field() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$daemon/status"; }

start_daemon
echo "-- threads with the exec sink and no hook: $(field Threads) (after 20 transitions:"
for n in $(seq 20); do
  s=$([[ $((n % 2)) == 1 ]] && echo offline || echo online)
  echo "{\"state\":\"$s\"}" > "$work/fifo"
done
sleep 1
echo "   $(field Threads) threads, VmRSS $(field VmRSS) kB)"
stop_daemon

# Each hook appends "sequence start-time" to its own file as its first command.
for n in $(seq -w 1 10); do
  printf '#!/bin/sh\necho "$LIFELINE_SEQUENCE $(date +%%s%%N)" >> %q/%s.starts\n' "$work" "$n" > "$hooks/$n-hook"
  chmod 700 "$hooks/$n-hook"
done
start_daemon
echo "-- observation -> hook running (10 hooks; hook 01 and hook 10)"
python3 - "$work" <<'PY'
import json, os, sys, time
work = sys.argv[1]
def starts(name):
    try:
        with open(os.path.join(work, name + ".starts")) as f:
            return dict(tuple(map(int, l.split())) for l in f if l.strip())
    except OSError:
        return {}
first, last = [], []
for n in range(60):
    state = "offline" if n % 2 == 0 else "online"
    said = time.time_ns()
    with open(os.path.join(work, "fifo"), "w") as f:
        f.write(json.dumps({"state": state}) + "\n")
    deadline = time.time() + 5
    while len(starts("10")) <= n:
        if time.time() > deadline:
            sys.exit(f"timed out on transition {n + 1}")
        time.sleep(0.001)
    seq = max(starts("10"))
    # Each hook has its own lane: hook 01 starts first but may write its line after
    # hook 10 has (or still be finishing the previous transition's run).
    while seq not in starts("01"):
        if time.time() > deadline:
            sys.exit(f"hook 01 never ran for transition {n + 1}")
        time.sleep(0.001)
    first.append((starts("01")[seq] - said) / 1e6)
    last.append((starts("10")[seq] - said) / 1e6)
    time.sleep(0.05)
for name, xs in (("hook 01", first), ("hook 10", last)):
    xs = sorted(xs[10:])  # the first runs warm the page cache
    print(f"{name}: median {xs[len(xs) // 2]:.1f} ms, p95 {xs[int(len(xs) * 0.95)]:.1f} ms, max {xs[-1]:.1f} ms ({len(xs)} transitions)")
PY
stop_daemon
rm -f "$hooks"/*

printf '#!/bin/sh\nhead -c 1000000000 /dev/zero\n' > "$hooks/10-zeros"
printf '#!/bin/sh\nyes | head -c 1000000000\n' > "$hooks/20-yes"
chmod 700 "$hooks"/*
start_daemon
before_rss=$(field VmRSS); before_hwm=$(field VmHWM)
t0=$(date +%s%N)
echo '{"state":"offline"}' > "$work/fifo"
for _ in $(seq 6000); do
  [[ $(grep -c "done in" "$work/daemon.log" || true) -ge 2 ]] && break
  sleep 0.01
done
t1=$(date +%s%N)
echo "-- two hooks printing 1 GB each (one line of NULs; lines of \"y\"), side by side"
echo "   both read to their end in $(( (t1 - t0) / 1000000 )) ms"
grep "done in" "$work/daemon.log" | sed 's/.*hook /   hook /'
echo "   VmRSS $before_rss -> $(field VmRSS) kB, VmHWM $before_hwm -> $(field VmHWM) kB"
stop_daemon
