#!/usr/bin/env bash
# NetworkManager monitor benchmark (issue 13):
# 1. latency from a NetworkManager `Connectivity` change (python-dbusmock's
#    NetworkManager on a private stand-in for the system bus) to the daemon's
#    event-log line, debounce 0, so only the monitor and the core are measured;
# 2. what the monitor costs where there is no system bus at all: CPU time and
#    resident memory of the daemon over an idle window, with and without it.
# Needs dbus-daemon and python3-dbusmock; run by `make bench` after the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BENCH_BIN:-$PWD/.build/release/lifeline}
mock=$PWD/Tests/IntegrationTests/Resources/nm_mock.py
rounds=${NM_BENCH_ROUNDS:-200}
idle_window=${NM_BENCH_IDLE_WINDOW:-30}

if ! command -v dbus-daemon >/dev/null || ! /usr/bin/python3 -c 'import dbusmock' 2>/dev/null; then
  echo "skipped: the NetworkManager benchmark needs dbus-daemon and python3-dbusmock"
  exit 0
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

daemon_env() {  # exec: the pid `$!` names is then the daemon's, so cleanup ends it
  exec env XDG_CONFIG_HOME="$work/$1/config" XDG_STATE_HOME="$work/$1/state" XDG_RUNTIME_DIR="$work/$1/run" \
    DBUS_SESSION_BUS_ADDRESS="unix:path=$work/no-session-bus" LIFELINE_LOG_LEVEL=notice "${@:2}"
}
prepare() {  # NAME CONFIG
  mkdir -p "$work/$1/config/lifeline" "$work/$1/state" "$work/$1/run"
  printf '%s\n' "$2" > "$work/$1/config/lifeline/config.toml"
}

# 1. Latency.
bus="unix:path=$work/system_bus_socket"
dbus-daemon --session --nofork --nopidfile --address="$bus" 2>/dev/null & pids+=($!)
for _ in $(seq 200); do [[ -S $work/system_bus_socket ]] && break; sleep 0.01; done
DBUS_SYSTEM_BUS_ADDRESS=$bus /usr/bin/python3 -m dbusmock --system -t networkmanager >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 500); do
  DBUS_SYSTEM_BUS_ADDRESS=$bus dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.NetworkManager 2>/dev/null | grep -q true && break
  sleep 0.01
done
DBUS_SYSTEM_BUS_ADDRESS=$bus /usr/bin/python3 "$mock" primary "Home Wi-Fi" 802-11-wireless wlan0 2
prepare latency '[debounce]
down = "0ms"
up = "0ms"

[[monitor]]
kind = "networkmanager"

[[sink]]
kind = "log"'
daemon_env latency DBUS_SYSTEM_BUS_ADDRESS="$bus" "$bin" daemon >"$work/latency.log" 2>&1 & pids+=($!)
events=$work/latency/state/lifeline/events.jsonl
for _ in $(seq 1000); do [[ -s $events ]] && break; sleep 0.01; done

DBUS_SYSTEM_BUS_ADDRESS=$bus /usr/bin/python3 - "$events" "$rounds" <<'PY'
import os, statistics, sys, time
import dbus
events, rounds = sys.argv[1], int(sys.argv[2])
mock = dbus.Interface(dbus.SystemBus().get_object('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager'),
                      'org.freedesktop.DBus.Mock')
def lines():
    with open(events, 'rb') as f:
        return f.read().count(b'\n')
samples = []
for i in range(rounds):
    before = lines()
    start = time.monotonic()
    mock.SetConnectivity(dbus.UInt32(3 if i % 2 == 0 else 4))
    while lines() == before:
        if time.monotonic() - start > 5:
            sys.exit('no event-log line within 5 s')
        time.sleep(0.0002)
    samples.append((time.monotonic() - start) * 1000)
samples.sort()
p = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print(f"Connectivity change -> event-log line, {rounds} changes: median {statistics.median(samples):.2f} ms, "
      f"p95 {p(0.95):.2f} ms, max {samples[-1]:.2f} ms")
PY

# 2. Idle cost without a system bus.
idle() {  # NAME MONITORS
  prepare "$1" "[[monitor]]
kind = \"netlink\"
$2

[[sink]]
kind = \"log\""
  daemon_env "$1" DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-system-bus" "$bin" daemon >"$work/$1.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  sleep 2  # start-up, not measured
  local child
  child=$(pgrep -P "$pid" | head -1 || true)
  local target=${child:-$pid}
  read -r t0 < <(awk '{print $14 + $15}' "/proc/$target/stat")
  sleep "$idle_window"
  read -r t1 < <(awk '{print $14 + $15}' "/proc/$target/stat")
  local rss
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$target/status")
  echo "$1: $(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) ms CPU in ${idle_window} s idle, VmRSS ${rss} kB"
  kill "$pid"
}
idle without-networkmanager ""
idle with-networkmanager-no-bus '[[monitor]]
kind = "networkmanager"'
