#!/usr/bin/env bash
# Core benchmarks: bus throughput and the daemon's idle memory (log sink only).
# Run by `make bench` after the release build (--static-swift-stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/lifeline

echo "-- bus throughput (decision + debounce + fan-out to 4 sinks)"
.build/release/lifeline-bench throughput 2000000

echo "-- idle memory of 'lifeline daemon' with the log sink only"
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
printf '[[sink]]\nkind = "log"\npath = "%s/events.jsonl"\n' "$work" > "$work/config.toml"
sync  # a freshly linked binary's page cache is dirty until written back; measure it clean
XDG_RUNTIME_DIR="$work/run" LIFELINE_LOG_LEVEL=warning "$bin" daemon --config "$work/config.toml" &
pid=$!
sleep 3
awk '/^VmRSS/ {printf "  VmRSS %s kB\n", $2} /^Threads/ {printf "  threads %s\n", $2}' "/proc/$pid/status"
awk '/^(Pss|Pss_Anon|Pss_File|Private_Dirty):/ {printf "  %s %s kB\n", $1, $2}' "/proc/$pid/smaps_rollup"
ticks_before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
sleep 10
ticks_after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
echo "  CPU while idle for 10 s: $(( (ticks_after - ticks_before) * 1000 / $(getconf CLK_TCK) )) ms"
