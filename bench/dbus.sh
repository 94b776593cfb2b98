#!/usr/bin/env bash
# D-Bus: on a private session bus,
#  1. a state published by the bus -> StateChanged arriving at a subscriber process (dbus-monitor),
#  2. Check() (with a checker that answers at once) and GetStatus() round trips,
#  3. `lifeline status` and `lifeline check` as whole processes (hyperfine) against a running daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=.build/release/lifeline-bench
LIFELINE=$PWD/.build/release/lifeline
[[ -x $BENCH ]] || swift build -c release --static-swift-stdlib --product lifeline-bench
[[ -x $LIFELINE ]] || make -s release

quiet_bus() { grep -v '^dbus-daemon\[' >&2 || true; }

dbus-run-session -- "$BENCH" dbus --count "${DBUS_BENCH_COUNT:-1000}" 2> >(quiet_bus)

if command -v hyperfine >/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/config/lifeline" "$tmp/state" "$tmp/run"
  # No monitor: `check` then measures the CLI and the bus, not a probe (which is throttled
  # to one per second, so back-to-back checks would each wait for it).
  printf 'monitor = []\n[[sink]]\nkind = "dbus"\n' > "$tmp/config/lifeline/config.toml"
  # Should a monitor be added, keep any probe off the internet (a closed loopback proxy).
  XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state XDG_RUNTIME_DIR=$tmp/run LIFELINE=$LIFELINE http_proxy=http://127.0.0.1:9 \
  dbus-run-session -- bash -c '
    "$LIFELINE" daemon 2>/dev/null & daemon=$!
    for _ in $(seq 200); do "$LIFELINE" status >/dev/null 2>&1 && break; [[ $? -ne 3 ]] && break; sleep 0.01; done
    # No monitor runs, so the state is unknown and both exit 1: -i keeps hyperfine going.
    # `status` answers from the state file in the small front binary; `check` goes over D-Bus.
    hyperfine -N -i --warmup 20 --runs 300 --style basic "$LIFELINE status" "$LIFELINE check"
    kill $daemon; wait $daemon || true
  ' 2> >(quiet_bus)
else
  echo "hyperfine not installed: skipping the CLI timings"
fi
