#!/usr/bin/env bash
# Idle wake-ups and memory of `lifeline daemon` with the embedded defaults
# (every monitor and sink `lifeline config show` lists), as a desktop runs it:
# a private session bus, one tmux server, a check server the probe reaches
# (default interval 30 s, only the URL points at the lab). Nothing changes
# while it is measured, and no traffic flows but the probe's own.
#
# For IDLE_WINDOW seconds (default 60) after a warm-up, while online and then
# while limited (nftables drops everything the namespace sends upstream, and
# the outage's first minute is over), it
# counts the voluntary context switches of every daemon thread
# (/proc/PID/task/TID/status; a thread sleeping and being woken again is one),
# summed per thread name (/proc/PID/task/TID/comm), sampled every 100 ms so
# that the wake-ups of each probe round (a probe thread awake, and what
# publishes its verdict) are told from those outside the rounds
# (bench/idle_wakeups.py); the probes made meanwhile (the daemon's debug log);
# then VmRSS, RssAnon (status) and PSS (smaps_rollup). Goal: at most 2
# wake-ups per probe interval, plus what the stall detector needs while
# traffic flows (none flows here). The memory is that of a daemon logging at
# the debug level (the rounds are read from its log), which keeps the logging
# code resident too; the memory goal is measured by bench/memory.sh, on the
# daemon as it ships.
#
# Needs root, ip, nft, python3, dbus-daemon, tmux. Uses .build/release/lifeline
# (built by `make bench`), or $LIFELINE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
window=${IDLE_WINDOW:-60}
[ -x "$bin" ] || make -s release
for tool in nft dbus-daemon tmux; do
    command -v "$tool" >/dev/null || { echo "idle bench: needs $tool; skipped"; exit 0; }
done
if [ "$(id -u)" != 0 ]; then echo "idle bench: needs root (network namespaces); skipped"; exit 0; fi

lab_init
tag=$lab_tag
client=llic-$tag upstream=lliu-$tag
gw=10.79.0.1 me=10.79.0.2
lab_cleanup() {
    [ -S "$work/tmux/tmux-0/bench" ] && tmux -S "$work/tmux/tmux-0/bench" kill-server 2>/dev/null
    [ -n "${IDLE_BENCH_KEEP:-}" ] && cp -r "$work" "/tmp/idle-bench-$tag"
}

lab_pair "$client" "$upstream" "$gw" "$me"

lab_check_server "$gw" "$upstream"

lab_session_bus
mkdir -p "$work/tmux"
export TMUX_TMPDIR=$work/tmux
tmux -L bench new-session -d -x 80 -y 10 "sleep infinity"

# The embedded defaults (`lifeline config show`), with the check URL in the lab.
mkdir -p "$work/config" "$work/run" "$work/state"
lab_default_config "$gw" > "$work/config/config.toml"
XDG_RUNTIME_DIR=$work/run XDG_STATE_HOME=$work/state LIFELINE_LOG_LEVEL=debug \
    ip netns exec "$client" "$bin" daemon --config "$work/config/config.toml" 2> "$work/daemon.log" &
daemon=$!
pids+=("$daemon")

wait_state() {  # STATE LIMIT_MS: the published state (runtime state file), polled every 10 ms
    local start; start=$(now_ms)
    until [ "$(state)" = "$1" ]; do
        if (( $(now_ms) - start > $2 )); then echo "daemon still '$(state)' after $2 ms, expected $1"; tail -20 "$work/daemon.log"; exit 1; fi
        sleep 0.01
    done
}
probes() { grep -c 'probe (' "$work/daemon.log" || true; }
# measure LABEL: the window, then one row per thread name, split into probe
# rounds and the time between them (bench/idle_wakeups.py).
measure() {
    local probes_before; probes_before=$(probes)
    local table; table=$(python3 bench/idle_wakeups.py "$daemon" "$window" "$work/daemon.log")
    local made=$(( $(probes) - probes_before ))
    echo "-- $1: $window s, $made probe(s) made by the daemon meanwhile"
    printf '%s\n' "$table"
}
memory() {
    awk '/^VmRSS|^RssAnon|^Threads/ { printf "   %s %s %s\n", $1, $2, $3 }' "/proc/$daemon/status"
    awk '/^Pss:/ { printf "   Pss: %s kB\n", $2 }' "/proc/$daemon/smaps_rollup"
}

# With IDLE_STRACE=SECONDS: which system calls each thread makes while idle
# (strace -f on the daemon, after the counts, so its cost is not in them).
trace() {
    [ -n "${IDLE_STRACE:-}" ] && command -v strace >/dev/null || return 0
    local out=/tmp/idle-strace-$tag-$1.txt names
    names=$(for task in /proc/"$daemon"/task/*; do echo "${task##*/} $(cat "$task/comm")"; done)
    timeout -s INT "$IDLE_STRACE" strace -f -tt -p "$daemon" -o "$out" 2>/dev/null || true
    echo "   strace -f -tt over $IDLE_STRACE s ($out), system calls per thread:"
    awk 'NR == FNR { name[$1] = $2; next } { calls[$1]++; split($3, c, "("); what[$1] = what[$1] " " c[1] }
         END { for (t in calls) { printf "   %-8s %-18s %4d:", t, name[t], calls[t]; n = split(what[t], w, " ");
               for (i = 1; i <= n && i <= 8; i++) printf " %s", w[i]; print (n > 8 ? " …" : "") } }' \
        <(echo "$names") "$out"
}

wait_state online 20000
# Warm-up: start-up work, the first probe and the first toast/tmux pushes are
# done, and so is the counter watcher's first back-off (1 + 2 + 4 + 8 s, then
# it samples right after each probe): what is measured is the idle daemon.
sleep "${IDLE_WARMUP:-20}"
measure "online, idle"
memory
trace online

ip netns exec "$upstream" nft -f - <<NFT
table inet lifeline_idle_$tag {
    chain in { type filter hook input priority 0; policy accept; iifname "v1" drop; }
}
NFT
wait_state limited 90000
# An outage's first minute is not idle: the probe's ramp (1, 2, 4 … s, each
# probe waiting out its 5 s timeout) and the counter watcher's back-off reach
# the 30 s interval after about a minute. What is measured is what follows,
# as long as the outage lasts.
sleep "${IDLE_OUTAGE_SETTLE:-60}"
measure "limited (internet blackholed), idle"
memory
trace limited
