#!/usr/bin/env bash
# Core benchmarks: bus throughput and the daemon's idle memory.
# Run by `make bench` after the release build (--static-swift-stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/.build/release/lifeline

echo "-- bus throughput (decision + debounce + fan-out to 4 sinks)"
.build/release/lifeline-bench throughput 2000000

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sync  # a freshly linked binary's page cache is dirty until written back; measure it clean

# measure LABEL CONFIG: idle memory and CPU of a daemon on a private session bus.
measure() {
  echo "-- idle daemon: $1"
  mkdir -p "$work/run"
  printf '%s\n' "$2" > "$work/config.toml"
  WORK=$work BIN=$bin XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=error \
    dbus-run-session -- bash -c '
      "$BIN" daemon --config "$WORK/config.toml" 2>/dev/null & pid=$!
      sleep 3
      awk "/^VmRSS/ {printf \"  VmRSS %s kB\n\", \$2} /^Threads/ {printf \"  threads %s\n\", \$2}" /proc/$pid/status
      awk "/^(Pss|Pss_Anon|Pss_File):/ {printf \"  %s %s kB\n\", \$1, \$2}" /proc/$pid/smaps_rollup
      before=$(awk "{print \$14 + \$15}" /proc/$pid/stat)
      sleep 10
      after=$(awk "{print \$14 + \$15}" /proc/$pid/stat)
      echo "  CPU while idle for 10 s: $(( (after - before) * 1000 / $(getconf CLK_TCK) )) ms"
      kill $pid; wait $pid || true
    ' 2> >(grep -v "^dbus-daemon\[" >&2 || true)
}

measure "log sink only, no monitors" 'monitor = []
[[sink]]
kind = "log"'
# The probe stays off the internet: its check URLs become one closed loopback
# port (a proxy would do too, but a proxy makes the probe load libcurl).
measure "the embedded defaults (netlink, probe; log, dbus, libnotify)" \
  "$(XDG_CONFIG_HOME=$work/none "$bin" config show | sed 's|^url = \[.*|url = "http://127.0.0.1:9/"|')"
