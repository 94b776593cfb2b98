#!/usr/bin/env bash
# Probe benchmark (issue 4): how fast the probe notices a dead upstream and its
# return, with the default settings (interval 30s, timeout 5s, failures 2,
# stall 3s, debounce down 2s / up 1s), and how much it sends on an idle machine.
#
# A private network namespace whose default route leads to a veth end in the
# root namespace, where a local check server runs (Tests/IntegrationTests/
# Resources/probe_server.py). "Blackhole" = nftables drops everything from the
# namespace: the link stays up, netlink sees nothing. Nothing leaves the machine.
# Needs root, ip, nft, python3; run by `make bench` after the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
rounds=${PROBE_BENCH_ROUNDS:-3}
idle_window=${PROBE_BENCH_IDLE_WINDOW:-65}

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v nft >/dev/null || ! command -v python3 >/dev/null; then
  echo "skipped: the probe benchmark needs root, ip, nft and python3"
  exit 0
fi

lab_init
tag=$lab_tag
ns=llbench-$tag a=lba$tag b=lbb$tag table=llbench_$tag
net=${PROBE_BENCH_NET:-10.215.7}  # another /24 lets two runs go side by side
host=$net.1 nsaddr=$net.2
lab_cleanup() {
  nft delete table inet "$table" 2>/dev/null
  [[ -n "${PROBE_BENCH_KEEP:-}" ]] && cp "$work/daemon.log" /tmp/probe-bench-daemon.log
}

lab_single "$ns" "$a" "$b" "$host" "$nsaddr"

lab_check_server "$host"

blackhole() {
  nft add table inet "$table"
  nft add chain inet "$table" in '{ type filter hook input priority 0; policy accept; }'
  nft add rule inet "$table" in iifname "$a" drop
}
heal() { nft delete table inet "$table"; }

# Default settings; only the URL points at the lab. The link monitor is there as
# in the embedded defaults: it names the interface whose counters the stall
# trigger reads.
cat > "$work/config.toml" <<TOML
[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
url = "http://$host:8080/check_network_status.txt"

[[sink]]
kind = "log"
path = "$work/events.jsonl"
TOML
start_daemon() {
  rm -rf "$work/run"; mkdir -p "$work/run"
  XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=${PROBE_BENCH_LOG_LEVEL:-warning} \
    ip netns exec "$ns" "$bin" daemon --config "$work/config.toml" >> "$work/daemon.log" 2>&1 &
  daemon=$!
  pids+=("$daemon")
  wait_state online 10000
}

echo "-- traffic flowing (20 UDP packets/s from the namespace to an echo server): blackhole -> limited, heal -> online"
start_daemon
python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('$host', 7))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)
" &
pids+=($!)
ip netns exec "$ns" python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    try: s.sendto(b'x' * 32, ('$host', 7))
    except OSError: pass
    time.sleep(0.05)
" 2>/dev/null &
pids+=($!)
sleep 5  # the sender is running and answered
for i in $(seq "$rounds"); do
  t0=$(now_ms); blackhole
  wait_state limited 60000; t1=$(now_ms)
  # Heal at a random point of the ramp (a probe may or may not be under way).
  sleep "$(( RANDOM % 8 + 2 )).$(( RANDOM % 10 ))"
  t2=$(now_ms); heal
  wait_state online 60000; t3=$(now_ms)
  printf '  round %d: limited after %5d ms, online again after %5d ms\n' "$i" $((t1 - t0)) $((t3 - t2))
  sleep 5
done
kill "$daemon"; wait "$daemon" 2>/dev/null || true
kill -9 "${pids[-1]}" "${pids[-2]}"; wait "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
grep -o '"reason":"[^"]*"' "$work/events.jsonl" | sort | uniq -c | sed 's/^/  /'

echo "-- idle online machine: probe requests at the server in ${idle_window} s (interval 30 s)"
: > "$work/requests.log"
start_daemon
ticks() { awk '{print $14 + $15}' "/proc/$daemon/stat"; }
before=$(ticks)
sleep "$idle_window"
after=$(ticks)
awk '/^VmRSS/ {printf "  VmRSS %s kB", $2} /^Threads/ {printf ", %s threads\n", $2}' "/proc/$daemon/status"
kill "$daemon"; wait "$daemon" 2>/dev/null || true
count=$(grep -c '^GET' "$work/requests.log" || true)
echo "  $count requests in ${idle_window} s (first at start-up); at most $(( idle_window / 30 + 1 )) allowed"
echo "  CPU over the window (probes + once-a-second counter sampling): $(( (after - before) * 1000 / $(getconf CLK_TCK) )) ms"

echo "-- computed (worst / mean over when the outage starts within an interval)"
echo "  lifeline idle: interval 30 + two probes whose connect gives up at 1.25 s + debounce 2 = 34.5 s / 19.5 s; recovery idle <= ramp (up to 30 s) + debounce 1"
echo "  NetworkManager defaults: interval 300 + timeout 20 = 320 s / 170 s; recovery up to 300 s (its ramp)"
echo "  tmux-online-status style 'ping -c1 -w3' per 15 s status refresh: 15 + 3 = 18 s / 10.5 s; recovery <= 15 s; 2 pings per 30 s"
