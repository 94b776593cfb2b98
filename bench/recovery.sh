#!/usr/bin/env bash
# Recovery benchmark: from the moment the default route or the carrier comes back
# to `online` published, with the embedded defaults' monitors (netlink + probe,
# interval 30 s, timeout 5 s, debounce down 2 s / up 1 s); and, with no traffic
# at all, how long a silent upstream loss takes to show (the idle case).
#
# A private network namespace whose default route leads to a veth end in the
# root namespace, where the check server runs. Each round removes the route (or
# takes the carrier down on the root-namespace end), waits for `offline`, waits
# a random 1.0–4.9 s, puts it back and times the runtime state file (polled
# every 10 ms) showing `online`. "Blackhole" = nftables drops everything from
# the namespace: netlink sees nothing.
#
# RECOVERY_BENCH_ROUNDS (default 10) rounds per scenario; RECOVERY_BENCH_IDLE_ROUNDS
# (default 3) blackholes with no traffic; RECOVERY_BENCH_NET (default 10.215.9)
# the /24 of the lab; LIFELINE_BIN the binary (default the release build).
# Needs root, ip, nft, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
rounds=${RECOVERY_BENCH_ROUNDS:-10}
idle_rounds=${RECOVERY_BENCH_IDLE_ROUNDS:-3}
net=${RECOVERY_BENCH_NET:-10.215.9}

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v nft >/dev/null || ! command -v python3 >/dev/null; then
  echo "skipped: the recovery benchmark needs root, ip, nft and python3"
  exit 0
fi
[[ -x $bin ]] || { echo "build it first: make release (or set LIFELINE_BIN)" >&2; exit 1; }

lab_init
tag=$lab_tag
ns=llrec-$tag a=lra$tag b=lrb$tag table=llrec_$tag
host=$net.1 nsaddr=$net.2
lab_cleanup() {
  nft delete table inet "$table" 2>/dev/null
  [[ -n "${RECOVERY_BENCH_KEEP:-}" ]] && cp "$work/daemon.log" "/tmp/recovery-bench-$tag.log"
}

lab_single "$ns" "$a" "$b" "$host" "$nsaddr"

lab_check_server "$host"

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

# summary LABEL VALUES…: min / median / max in ms.
summary() {
  local label=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v label="$label" '
    { v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "  %-44s n=%d  min %5d ms  median %5d ms  max %5d ms\n", label, NR, v[1], m, v[NR] }'
}

mkdir -p "$work/run"
XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=${RECOVERY_BENCH_LOG_LEVEL:-warning} \
  ip netns exec "$ns" "$bin" daemon --config "$work/config.toml" >> "$work/daemon.log" 2>&1 &
pids+=($!)
wait_state online 20000

pause() { sleep "$(( RANDOM % 4 + 1 )).$(( RANDOM % 10 ))"; }

route=()
for i in $(seq "$rounds"); do
  ip -n "$ns" route del default
  wait_state offline 10000
  pause
  t0=$(now_ms); ip -n "$ns" route add default via "$host"
  wait_state online 20000; route+=($(( $(now_ms) - t0 )))
  sleep 2
done
summary "default route back -> online" "${route[@]}"

carrier=()
for i in $(seq "$rounds"); do
  ip link set "$a" down
  wait_state offline 10000
  pause
  t0=$(now_ms); ip link set "$a" up
  wait_state online 20000; carrier+=($(( $(now_ms) - t0 )))
  sleep 2
done
summary "carrier back (peer up) -> online" "${carrier[@]}"

# Idle: nothing but the probe's own packets; the loss is only seen by the probe.
idle=()
for i in $(seq "$idle_rounds"); do
  sleep "$(( RANDOM % 30 )).$(( RANDOM % 10 ))"  # anywhere within the 30 s interval
  nft add table inet "$table"
  nft add chain inet "$table" in '{ type filter hook input priority 0; policy accept; }'
  t0=$(now_ms); nft add rule inet "$table" in iifname "$a" drop
  wait_state limited 90000; idle+=($(( $(now_ms) - t0 )))
  nft delete table inet "$table"
  wait_state online 60000
done
[[ $idle_rounds -gt 0 ]] && summary "idle blackhole -> limited" "${idle[@]}"
grep -o '"reason":"[^"]*"' "$work/events.jsonl" | sort | uniq -c | sed 's/^/  /'
