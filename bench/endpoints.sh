#!/usr/bin/env bash
# Several check endpoints (issue 27): how long a real outage takes to become
# `limited` with one check URL and with two, when the uplink is blackholed
# (nftables drops everything from the namespace: SYNs go unanswered) and when
# the check servers refuse (a TCP reset at once). The second endpoint starts
# when the first fails or has not answered within its usual time.
#
# Then the time to the first verdict on a new path (a daemon just started,
# debounce 0): from the start to the first `online` or `limited`, with the
# first endpoint blackholed (the second answers), refused (the second answers),
# and all dark; for this build (endpoints started staggered, as Happy Eyeballs
# starts connections) and, when ENDPOINTS_BENCH_SEQUENTIAL_BIN names one, for a
# build that asks them one after another, side by side.
#
# A private namespace whose default route leads to this machine's veth end,
# where two check servers run on two addresses (Tests/IntegrationTests/
# Resources/probe_server.py). Settings: the defaults (timeout 5s, failures 2,
# debounce down 2s) but `interval`, shortened to 5s so a run takes minutes.
# Nothing leaves the machine. Needs root, ip, nft, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
rounds=${ENDPOINTS_BENCH_ROUNDS:-5}

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v nft >/dev/null || ! command -v python3 >/dev/null; then
  echo "skipped: the endpoints benchmark needs root, ip, nft and python3"
  exit 0
fi

lab_init
tag=$lab_tag
ns=llep-$tag a=lea$tag b=leb$tag table=llep_$tag
net=${ENDPOINTS_BENCH_NET:-10.216.$(( $$ % 200 + 20 ))}
host=$net.1 second=$net.3 nsaddr=$net.2
servers=()
lab_cleanup() {
  for p in "${servers[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  nft delete table inet "$table" 2>/dev/null
}

lab_single "$ns" "$a" "$b" "$host" "$nsaddr"
ip addr add "$second/24" dev "$a"
script=$PWD/Tests/IntegrationTests/Resources/probe_server.py

start_servers() {
  for address in "$host" "$second"; do
    rm -f "$work/server-$address.out"
    python3 "$script" ok "$address" 8080 "$work/requests-$address.log" > "$work/server-$address.out" &
    servers+=($!)
    for _ in $(seq 500); do grep -q ready "$work/server-$address.out" 2>/dev/null && break; sleep 0.01; done
  done
}
stop_servers() {
  for p in "${servers[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  servers=()
}
blackhole() {
  nft add table inet "$table"
  nft add chain inet "$table" in '{ type filter hook input priority 0; policy accept; }'
  nft add rule inet "$table" in iifname "$a" drop
}
heal() { nft delete table inet "$table" 2>/dev/null || true; }

# write_config URLS [TOML]: the daemon's config, TOML (a [debounce] table) first.
write_config() {
  cat > "$work/config.toml" <<TOML
${2:-}
[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
url = [$1]
interval = "5s"

[[sink]]
kind = "log"
path = "$work/events.jsonl"
TOML
}
start_daemon() {
  rm -rf "$work/run"; mkdir -p "$work/run"
  XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=warning \
    ip netns exec "$ns" "$bin" daemon --config "$work/config.toml" >> "$work/daemon.log" 2>&1 &
  daemon=$!
  pids+=("$daemon")
  wait_state online 10000
}

one="\"http://$host:8080/check_network_status.txt\""
two="$one, \"http://$second:8080/check_network_status.txt\""
printf '%-14s %-11s %s\n' endpoints outage "time to limited, ms (each round; the outage starts at a random point of the interval)"
for setup in one two; do
  write_config "${!setup}"
  start_servers
  start_daemon
  for outage in blackholed refused; do
    times=()
    for _ in $(seq "$rounds"); do
      sleep "$(( RANDOM % 5 )).$(( RANDOM % 10 ))"
      t0=$(now_ms)
      if [[ $outage == blackholed ]]; then blackhole; else stop_servers; fi
      wait_state limited 60000 || true
      times+=($(( $(now_ms) - t0 )))
      if [[ $outage == blackholed ]]; then heal; else start_servers; fi
      wait_state online 60000 || true
    done
    printf '%-14s %-11s %s\n' "$setup" "$outage" "${times[*]}"
  done
  kill "$daemon"; wait "$daemon" 2>/dev/null || true
  stop_servers
done

# -- The first verdict on a new path.
# first_verdict BIN: ms from starting BIN's daemon to its first online or limited.
first_verdict() {
  rm -rf "$work/run"; mkdir -p "$work/run"
  local t0 d; t0=$(now_ms)
  XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=warning \
    ip netns exec "$ns" "$1" daemon --config "$work/config.toml" >> "$work/daemon.log" 2>&1 &
  d=$!
  until [[ $(state) == online || $(state) == limited ]]; do
    (( $(now_ms) - t0 > 60000 )) && break
    sleep 0.005
  done
  echo $(( $(now_ms) - t0 ))
  kill "$d"; wait "$d" 2>/dev/null || true
}
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
first_rounds=${ENDPOINTS_BENCH_FIRST_ROUNDS:-3}
builds=(staggered)
[[ -n ${ENDPOINTS_BENCH_SEQUENTIAL_BIN:-} ]] && builds+=(sequential)
echo
echo "-- the first verdict on a new path (ms from the daemon's start; debounce 0; $first_rounds runs, median first)"
printf '%-12s %-18s %s\n' build first-endpoint "median; each run"
write_config "$two" "$(printf '[debounce]\ndown = "0s"\nup = "0s"\n')"
for outage in blackholed refused all-dark; do
  for build in "${builds[@]}"; do
    b=$bin; [[ $build == sequential ]] && b=$ENDPOINTS_BENCH_SEQUENTIAL_BIN
    start_servers
    case $outage in
      blackholed)
        nft add table inet "$table"
        nft add chain inet "$table" in '{ type filter hook input priority 0; policy accept; }'
        nft add rule inet "$table" in iifname "$a" ip daddr "$host" tcp dport 8080 drop ;;
      refused) kill -9 "${servers[0]}"; wait "${servers[0]}" 2>/dev/null || true ;;
      all-dark) blackhole ;;
    esac
    times=()
    for _ in $(seq "$first_rounds"); do times+=($(first_verdict "$b")); done
    heal
    stop_servers
    printf '%-12s %-18s %s; %s\n' "$build" "$outage" "$(median "${times[@]}")" "${times[*]}"
  done
done
