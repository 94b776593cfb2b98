#!/usr/bin/env bash
# What the quality attribute costs: one sample (the sock_diag read of every
# TCP socket, the filter to the primary interface's, the estimator) with 10,
# 100 and 1000 open connections, as `lifeline-bench sockdiag` measures it in a
# network namespace: CPU time per sample and voluntary context switches per
# sample (a reply the thread had to wait for). A sample is taken only on a
# wake-up the counter watcher makes anyway while traffic flows, so it adds no
# wake-up of its own; idle, none is taken (bench/idle.sh).
#
# Then the daemon side by side, the same binary with the probe's
# `quality = false` (the daemon as it was before) and `quality = true`, while
# 100 connections upload slowly through the lab for QUALITY_WINDOW seconds
# (default 30): CPU time (utime + stime from /proc/PID/stat), voluntary context
# switches of every thread, and VmRSS at the end.
#
# Needs root, ip, python3, dbus-daemon. Uses .build/release/lifeline and
# .build/release/lifeline-bench (built by `make bench`), or $LIFELINE_BIN and
# $LIFELINE_BENCH_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
benchbin=${LIFELINE_BENCH_BIN:-$(dirname "$bin")/lifeline-bench}
window=${QUALITY_WINDOW:-30}
traffic=$PWD/Tests/IntegrationTests/Resources/quality_traffic.py
for tool in ip python3 dbus-daemon; do
    command -v "$tool" >/dev/null || { echo "quality bench: needs $tool; skipped"; exit 0; }
done
if [ "$(id -u)" != 0 ]; then echo "quality bench: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$bin" ] && [ -x "$benchbin" ] || make -s release
ulimit -n 8192

lab_init
tag=$lab_tag
client=llqc-$tag upstream=llqu-$tag
gw=10.81.0.1 me=10.81.0.2
servers="198.18.0.1 198.18.0.2 198.18.0.3"
lab_pair "$client" "$upstream" "$gw" "$me"
for s in $servers; do ip -n "$upstream" addr add "$s/32" dev lo; done
ip netns exec "$upstream" python3 "$traffic" serve 5201 $servers > "$work/serve.out" &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$work/serve.out" 2>/dev/null && break; sleep 0.1; done

echo "## one sample"
for n in 10 100 1000; do
    ip netns exec "$client" python3 "$traffic" hold 5201 "$n" $servers > "$work/hold.out" &
    holder=$!
    for _ in $(seq 600); do grep -q ready "$work/hold.out" 2>/dev/null && break; sleep 0.1; done
    echo "connections $n: $(ip netns exec "$client" "$benchbin" sockdiag v0 --count 500 | tail -1 | sed 's/^sockdiag: //')"
    kill "$holder"; wait "$holder" 2>/dev/null || true
done

echo "## daemon while 100 connections upload"
lab_check_server "$gw" "$upstream"
lab_session_bus
for quality in false true; do
    mkdir -p "$work/$quality/config" "$work/$quality/run" "$work/$quality/state"
    lab_default_config "$gw" > "$work/$quality/config/config.toml"
    if grep -q '^quality = ' "$work/$quality/config/config.toml"; then
        sed -i "s/^quality = .*/quality = $quality/" "$work/$quality/config/config.toml"
    else
        sed -i "/^kind = \"probe\"/a quality = $quality" "$work/$quality/config/config.toml"
    fi
    ip netns exec "$client" python3 "$traffic" upload 5201 34 20000 $servers > "$work/up.out" &
    uploader=$!
    for _ in $(seq 600); do grep -q ready "$work/up.out" 2>/dev/null && break; sleep 0.1; done
    XDG_RUNTIME_DIR=$work/$quality/run XDG_STATE_HOME=$work/$quality/state \
        ip netns exec "$client" "$bin" daemon --config "$work/$quality/config/config.toml" 2> "$work/$quality/daemon.log" &
    daemon=$!
    # The daemon's own pid, as its state file names it (the front binary may
    # have started it as a child).
    pid=
    for _ in $(seq 300); do
        pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$work/$quality/run/lifeline/state.json" 2>/dev/null || true)
        [ -n "$pid" ] && break
        sleep 0.1
    done
    sleep 5
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    w0=$(cat /proc/$pid/task/*/status | awk '/^voluntary_ctxt_switches/ {n += $2} END {print n}')
    sleep "$window"
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    w1=$(cat /proc/$pid/task/*/status | awk '/^voluntary_ctxt_switches/ {n += $2} END {print n}')
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    hz=$(getconf CLK_TCK)
    cpu_ms=$(( ( (u1 - u0) + (s1 - s0) ) * 1000 / hz ))
    q=$(sed -n 's/.*"quality":"\([a-z]*\)".*/\1/p' "$work/$quality/run/lifeline/state.json" 2>/dev/null || true)
    echo "quality=$quality: cpu ${cpu_ms} ms in ${window} s, wake-ups $((w1 - w0)), VmRSS ${rss} kB, quality '${q}'"
    kill "$daemon" "$uploader"; wait "$daemon" "$uploader" 2>/dev/null || true
done
