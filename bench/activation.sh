#!/usr/bin/env bash
# D-Bus activation, cold: with no daemon running, how long the first
# GetStatus() takes when the session bus has to start the installed daemon
# (activation file Exec=, as on a session without systemd). Each round installs
# nothing new: one `make install` into a temporary PREFIX, then per round a
# fresh private bus, one timed call, the daemon stopped.
# Usage: bash bench/activation.sh   (after `make release`; ROUNDS=10, LIFELINE_BUILD=.build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
build=$(realpath "${LIFELINE_BUILD:-.build/release}")
for tool in dbus-daemon gdbus python3; do
  command -v "$tool" >/dev/null || { echo "activation.sh: needs $tool; skipped"; exit 0; }
done
work=$(mktemp -d)
bus_pid=
cleanup() {
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
make --no-print-directory -s install NO_BUILD=1 BUILD_DIR="$build" PREFIX="$work/prefix" >/dev/null
mkdir -p "$work/config/lifeline" "$work/state" "$work/run"
chmod 700 "$work/run"
printf '[[monitor]]\nkind = "netlink"\n\n[[sink]]\nkind = "log"\n' > "$work/config/lifeline/config.toml"
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run TMUX_TMPDIR=$work/run
cat > "$work/bus.conf" <<EOF
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <servicedir>$work/prefix/share/dbus-1/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus

samples=()
for _ in $(seq "$rounds"); do
  rm -f "$work/bus"
  dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile 2>/dev/null & bus_pid=$!
  for _ in $(seq 500); do [ -S "$work/bus" ] && break; sleep 0.01; done
  start=$(date +%s%N)
  gdbus call --session --timeout 20 --dest org.lifeline.Lifeline1 --object-path /org/lifeline/Lifeline1 \
    --method org.lifeline.Lifeline1.GetStatus >/dev/null
  end=$(date +%s%N)
  samples+=($(( (end - start) / 1000 )))
  pid=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.GetConnectionUnixProcessID org.lifeline.Lifeline1 | tr -dc '0-9 ' | awk '{print $2}')
  kill "$pid"
  for _ in $(seq 500); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
  kill "$bus_pid"; wait "$bus_pid" 2>/dev/null || true; bus_pid=
done
printf '%s\n' "${samples[@]}" | python3 -c '
import statistics, sys
us = sorted(int(x) for x in sys.stdin)
print(f"cold GetStatus() through activation, {len(us)} rounds: median {statistics.median(us)/1000:.1f} ms, min {us[0]/1000:.1f} ms, max {us[-1]/1000:.1f} ms")
'
