#!/usr/bin/env bash
# `lifeline wait-online`: from the moment the daemon's monitor says online to the
# moment wait-online has exited, over 20 offline → online changes. The daemon
# runs with no debounce on a private bus, its state set by an exec monitor that
# follows a file. BIN_DIR picks other binaries (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN_DIR:-$PWD/.build/release}/lifeline
rounds=${ROUNDS:-20}

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run
mkdir -p "$XDG_CONFIG_HOME/lifeline" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" 2>/dev/null & pids+=($!)
feed=$work/feed
echo '{"state":"offline","reason":"bench"}' > "$feed"
cat > "$XDG_CONFIG_HOME/lifeline/config.toml" <<TOML
[debounce]
down = "0s"
up = "0s"
[[monitor]]
kind = "exec"
command = ["tail", "-n", "+1", "-F", "$feed"]
[[sink]]
kind = "dbus"
TOML
for _ in $(seq 500); do [ -S "$work/bus" ] && break; sleep 0.01; done
"$bin" daemon 2>"$work/daemon.log" & pids+=($!)
state() { grep -o '"state":"[a-z]*"' "$XDG_RUNTIME_DIR/lifeline/state.json" 2>/dev/null || true; }
until_state() { for _ in $(seq 1000); do [ "$(state)" = "\"state\":\"$1\"" ] && return 0; sleep 0.005; done; echo "no $1" >&2; exit 1; }
until_state offline
dbus-monitor --session "type='method_call',member='GetStatus'" > "$work/calls" 2>/dev/null & pids+=($!)
sleep 0.5  # dbus-monitor needs a moment to become a monitor; not part of any measurement
results=()
for i in $(seq "$rounds"); do
    before=$(grep -c GetStatus "$work/calls" || true)
    "$bin" wait-online --timeout 30s & waiter=$!
    # Subscribed once it has asked for the state (its match rules come first).
    for _ in $(seq 1000); do [ "$(grep -c GetStatus "$work/calls" || true)" -gt "$before" ] && break; sleep 0.002; done
    start=$(date +%s%N)
    echo '{"state":"online","reason":"bench"}' >> "$feed"
    wait "$waiter"
    end=$(date +%s%N)
    results+=($(( (end - start) / 1000 )))
    echo '{"state":"offline","reason":"bench"}' >> "$feed"
    until_state offline
done
printf '%s\n' "${results[@]}" | sort -n | awk '{a[NR]=$1} END {printf "wait-online: monitor says online -> wait-online exited, %d rounds: median %.1f ms, max %.1f ms\n", NR, a[int((NR+1)/2)]/1000, a[NR]/1000}'
