#!/usr/bin/env bash
# tmux servers found without polling: (1) the time from a new tmux server's socket
# appearing to that server holding @lifeline, and (2) how often an idle daemon
# with the tmux sink wakes up (context switches of all its threads), next to the
# same daemon without the tmux sink.
# Uses .build/release/lifeline (make release), or the binary named by LIFELINE_BIN.
# Goals: new server <= 100 ms; the tmux sink adds no wake-ups while idle.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
[[ -x $bin ]] || { echo "build it first: make release (or set LIFELINE_BIN)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tmux missing (make bench installs it)" >&2; exit 1; }

work=$(mktemp -d /tmp/lifeline-bench-tmuxsrv.XXXXXX)
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run TMUX_TMPDIR=$work/t
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/no-bus
unset TMUX TMUX_PANE
mkdir -p "$XDG_CONFIG_HOME/lifeline" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$TMUX_TMPDIR"
chmod 700 "$XDG_RUNTIME_DIR"
daemon=
cleanup() {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
  for s in "$TMUX_TMPDIR"/tmux-*/*; do [[ -S $s ]] && tmux -S "$s" kill-server 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A monitor that says "online" once and then stays quiet, as a settled network does.
printf '#!/bin/sh\necho %s\nexec sleep 100000\n' "'{\"state\":\"online\",\"interface\":\"eth0\"}'" > "$work/monitor.sh"
chmod 700 "$work/monitor.sh"
config() {
  printf '[[monitor]]\nkind = "exec"\ncommand = ["%s"]\n\n[[sink]]\nkind = "log"\n' "$work/monitor.sh"
  [[ $1 == tmux ]] && printf '\n[[sink]]\nkind = "tmux"\nalert = "never"\n'
  return 0
}
start() {
  config "$1" > "$XDG_CONFIG_HOME/lifeline/config.toml"
  "$bin" daemon 2>>"$work/daemon.log" &
  daemon=$!
  for _ in $(seq 500); do
    "$bin" status >/dev/null 2>&1 && return 0
    sleep 0.01
  done
  echo "daemon not online:"; cat "$work/daemon.log"; exit 1
}
stop() { kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=; }
switches() { cat /proc/"$daemon"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
idle() {
  sleep 2  # let the start settle
  local a b
  a=$(switches); sleep 10; b=$(switches)
  echo "$1: $(( (b - a) )) context switches in 10 s idle ($(ls /proc/"$daemon"/task | wc -l) threads)"
}

echo "-- idle wake-ups"
start none; idle "without the tmux sink"; stop
start tmux
tmux -L idle -f /dev/null new-session -d -s idle "sleep infinity"
idle "with the tmux sink and one tmux server"

echo "-- new tmux server -> @lifeline set"
python3 - "$TMUX_TMPDIR/tmux-$(id -u)" <<'PY'
import os, subprocess, sys, time
folder = sys.argv[1]
samples = []
for n in range(20):
    name = f"new{n}"
    path = os.path.join(folder, name)
    p = subprocess.Popen(["tmux", "-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "b", "sleep infinity"])
    deadline = time.monotonic() + 5
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f"{name}: no socket")
    created = time.monotonic()
    while True:  # one tmux client per look: about 2 ms resolution
        value = subprocess.run(["tmux", "-L", name, "show-options", "-gv", "@lifeline"],
                               capture_output=True, text=True).stdout.strip()
        if value:
            break
        if time.monotonic() > deadline:
            sys.exit(f"{name}: never got @lifeline")
    samples.append((time.monotonic() - created) * 1000)
    p.wait()
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
samples.sort()
pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print(f"new server: n={len(samples)} median {pick(0.5):.1f} ms, p90 {pick(0.9):.1f} ms, max {samples[-1]:.1f} ms (goal <= 100 ms)")
PY
stop
