#!/usr/bin/env bash
# Netlink monitor benchmarks (root, iproute2, python3), in two private
# namespaces (client with the daemon, upstream with the gateway):
#  1. latency: kernel route change -> state published by the bus, debounce 0s,
#     p50/p95/max over LATENCY_CHANGES (default 200) changes from a persistent `ip -batch -`;
#  2. churn: CPU seconds (utime+stime from /proc/PID/stat) the daemon spends while
#     CHURN_PAIRS (default 1000) veth pairs are created, set up and deleted, and
#     the number of state changes it published meanwhile (goal: 0).
# Uses .build/release/lifeline (built by `make bench`), or $LIFELINE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-.build/release/lifeline}
changes=${LATENCY_CHANGES:-200}
pairs=${CHURN_PAIRS:-1000}
[ -x "$bin" ] || make -s release
if [ "$(id -u)" != 0 ]; then echo "netlink bench: needs root (network namespaces); skipped"; exit 0; fi

source bench/lib/lab.sh
lab_init
daemon=
lab_cleanup() { if [ -n "$daemon" ]; then kill "$daemon"; wait "$daemon"; fi; }
client=llbc-$lab_tag upstream=llbu-$lab_tag
lab_pair "$client" "$upstream" 10.77.0.1 10.77.0.2

start_daemon() {  # $1 = debounce windows
    rm -rf "$work/xdg"; mkdir -p "$work/xdg/config/lifeline" "$work/xdg/state" "$work/xdg/run"
    cat > "$work/xdg/config/lifeline/config.toml" <<TOML
[debounce]
down = "$1"
up = "$1"

[[monitor]]
kind = "netlink"

[[sink]]
kind = "log"
TOML
    XDG_CONFIG_HOME=$work/xdg/config XDG_STATE_HOME=$work/xdg/state XDG_RUNTIME_DIR=$work/xdg/run \
        ip netns exec "$client" "$bin" daemon 2> "$work/daemon.log" &
    daemon=$!
    for _ in $(seq 500); do [ -s "$work/xdg/state/lifeline/events.jsonl" ] && return; sleep 0.01; done
    echo "daemon published nothing"; cat "$work/daemon.log"; exit 1
}
stop_daemon() { kill "$daemon"; wait "$daemon" || true; daemon=; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

# 1. Latency.
start_daemon 0s
read -r p50 p95 max n < <(python3 bench/netlink_latency.py "$client" "$work/xdg/state/lifeline/events.jsonl" "$changes")
stop_daemon
echo "latency kernel change -> published (debounce 0s, $n changes): p50 ${p50} ms, p95 ${p95} ms, max ${max} ms"

# 2. Churn (default debounce, as users run it).
start_daemon 2s
events_before=$(wc -l < "$work/xdg/state/lifeline/events.jsonl")
sleep 0.2
cpu_before=$(cpu_seconds "$daemon")
{
    for i in $(seq "$pairs"); do
        echo "link add vb${i}a type veth peer name vb${i}b"
        echo "link set vb${i}a up"
        echo "link set vb${i}b up"
    done
    for i in $(seq "$pairs"); do echo "link del vb${i}a"; done
} > "$work/churn.batch"
churn_start=$(date +%s.%N)
ip -n "$client" -batch "$work/churn.batch"
churn_end=$(date +%s.%N)
sleep 3  # past the 2s debounce: a flip would have been published by now
cpu_after=$(cpu_seconds "$daemon")
events_after=$(wc -l < "$work/xdg/state/lifeline/events.jsonl")
overflows=$(grep -c "ENOBUFS" "$work/daemon.log" || true)
stop_daemon
cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.2f", b - a }')
churn=$(awk -v a="$churn_start" -v b="$churn_end" 'BEGIN { printf "%.1f", b - a }')
echo "churn of $pairs veth pairs (${churn}s): daemon CPU ${cpu} s, state changes $((events_after - events_before)), overflows ${overflows}"

ok=$(awk -v p50="$p50" -v p95="$p95" -v cpu="$cpu" 'BEGIN { print (p50 <= 1 && p95 <= 5 && cpu <= 0.5) ? "yes" : "no" }')
[ "$events_after" = "$events_before" ] || ok=no
echo "goals (p50 <= 1 ms, p95 <= 5 ms, <= 0.5 CPU-s, 0 state changes): $ok"
