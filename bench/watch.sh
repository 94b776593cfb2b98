#!/usr/bin/env bash
# `lifeline watch` as a bar runs it all day: memory (VmRSS, PSS, anonymous) and
# wake-ups (voluntary context switches of all its threads) over WATCH_SECONDS
# (default 30) while the state does not change, for the front binary (what
# `lifeline watch` runs when the state file exists) and for the full CLI
# (`lifeline-cli watch`, what answers when it does not).
# Uses .build/release/lifeline (make release), or the binary named by LIFELINE_BIN.
# Goals: <= 8 MB RSS; no wake-up while nothing changes.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
cli=$(dirname "$bin")/lifeline-cli
seconds=${WATCH_SECONDS:-30}
[[ -x $bin && -x $cli ]] || { echo "build it first: make release (or set LIFELINE_BIN)" >&2; exit 1; }

work=$(mktemp -d /tmp/lifeline-bench-watch.XXXXXX)
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/no-bus
mkdir -p "$XDG_CONFIG_HOME/lifeline" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A monitor that says "online" once and then stays quiet, as a settled network does.
printf '#!/bin/sh\necho %s\nexec sleep 100000\n' "'{\"state\":\"online\",\"interface\":\"eth0\"}'" > "$work/monitor.sh"
chmod 700 "$work/monitor.sh"
printf '[[monitor]]\nkind = "exec"\ncommand = ["%s"]\n\n[[sink]]\nkind = "log"\n' "$work/monitor.sh" \
  > "$XDG_CONFIG_HOME/lifeline/config.toml"
"$bin" daemon 2>>"$work/daemon.log" &
pids+=($!)
for _ in $(seq 500); do
  [[ -s $XDG_RUNTIME_DIR/lifeline/state.json ]] && grep -q '"online"' "$XDG_RUNTIME_DIR/lifeline/state.json" && break
  sleep 0.01
done

wakeups() {  # voluntary context switches of every thread of $1
  local sum=0 n
  for t in /proc/"$1"/task/*/status; do
    n=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t" 2>/dev/null || echo 0)
    sum=$((sum + n))
  done
  echo "$sum"
}
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/$3"; }

printf '%-28s %9s %9s %9s %14s\n' "watch" "RSS MB" "PSS MB" "anon MB" "wake-ups/${seconds}s"
measure() {  # label, command…
  local label=$1; shift
  "$@" --format waybar > "$work/out.$label" &
  local p=$!
  pids+=("$p")
  for _ in $(seq 500); do [[ -s $work/out.$label ]] && break; sleep 0.01; done
  sleep 1  # past start-up
  local before; before=$(wakeups "$p")
  sleep "$seconds"
  local after; after=$(wakeups "$p")
  awk -v l="$label" -v r="$(kb "$p" VmRSS status)" -v s="$(kb "$p" Pss smaps_rollup)" -v a="$(kb "$p" RssAnon status)" \
      -v w=$((after - before)) 'BEGIN { printf "%-28s %9.1f %9.1f %9.1f %14d\n", l, r/1024, s/1024, a/1024, w }'
  kill "$p"; wait "$p" 2>/dev/null || true
}
measure "lifeline watch (front)" "$bin" watch
measure "lifeline-cli watch (full)" "$cli" watch
