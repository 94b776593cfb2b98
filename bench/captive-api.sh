#!/usr/bin/env bash
# The captive-portal standard (RFC 8910/8908) against the probe alone, side by
# side on the same portal: from the moment a portal starts intercepting the
# check to `portal` published, (a) when the network also announces its API in
# a Router Advertisement (option 37, built with scapy) and the API says
# `captive: true`, and (b) when only the probe can notice (the check server
# answers with a redirect, as a portal does).
#
# A private namespace whose default route leads to this machine's veth end,
# where the check server (Tests/IntegrationTests/Resources/probe_server.py)
# and the API (captive_api_server.py, a certificate made now and given to the
# probe as `captive_portal_ca`) run. Settings: the defaults (interval 30s,
# debounce down 2s); each round starts the portal at a random point of the
# probe's interval. Nothing leaves the machine. Needs root, ip, python3,
# openssl and Debian's python3-scapy.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
rounds=${CAPTIVE_BENCH_ROUNDS:-3}
py=/usr/bin/python3

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v openssl >/dev/null \
  || ! $py -c 'import scapy.all' 2>/dev/null; then
  echo "skipped: the captive-portal benchmark needs root, ip, openssl and python3-scapy"
  exit 0
fi

lab_init
ns=llcp-$lab_tag a=lca$lab_tag b=lcb$lab_tag
net=${CAPTIVE_BENCH_NET:-10.217.$(( $$ % 200 + 20 ))}
host=$net.1 nsaddr=$net.2
resources=$PWD/Tests/IntegrationTests/Resources
check=""; api_server=""
lab_cleanup() {
  for p in $check $api_server; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
lab_single "$ns" "$a" "$b" "$host" "$nsaddr"
ip netns exec "$ns" sysctl -q -w "net.ipv6.conf.$b.accept_ra=1"

# serve MODE: the check server answers `ok` or `redirect` from now on.
serve() {
  [[ -n $check ]] && { kill -9 "$check" 2>/dev/null; wait "$check" 2>/dev/null || true; }
  rm -f "$work/check.out"
  python3 "$resources/probe_server.py" "$1" "$host" 8080 "$work/check.log" > "$work/check.out" &
  check=$!
  for _ in $(seq 500); do grep -q ready "$work/check.out" 2>/dev/null && break; sleep 0.01; done
}
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout "$work/api.key" -out "$work/api.pem" -subj "/CN=$host" \
  -addext "subjectAltName=IP:$host" -addext "basicConstraints=critical,CA:TRUE" 2>/dev/null
echo '{"captive": false}' > "$work/answer.json"
python3 "$resources/captive_api_server.py" "$work/api.pem" "$work/api.key" "$host" 8443 "$work/answer.json" "$work/api.log" \
  > "$work/api.out" &
api_server=$!
for _ in $(seq 500); do grep -q ready "$work/api.out" 2>/dev/null && break; sleep 0.01; done

cat > "$work/config.toml" <<TOML
[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
url = "http://$host:8080/check_network_status.txt"
captive_portal_ca = "$work/api.pem"

[[sink]]
kind = "log"
path = "$work/events.jsonl"
TOML
serve ok
mkdir -p "$work/run"
XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" LIFELINE_LOG_LEVEL=warning \
  ip netns exec "$ns" "$bin" daemon --config "$work/config.toml" >> "$work/daemon.log" 2>&1 &
pids+=($!)
wait_state online 15000

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
announced=() probe_only=()
for round in $(seq "$rounds"); do
  for path in announced probe_only; do
    sleep "$(( RANDOM % 30 )).$(( RANDOM % 10 ))"
    serve redirect
    if [[ $path == announced ]]; then
      echo "{\"captive\": true, \"user-portal-url\": \"https://$host:8443/login\"}" > "$work/answer.json"
      # From the RA's sending, as the sender timed it (starting Python and scapy takes longer).
      t0=$($py "$resources/send_ra.py" "$a" "https://$host:8443/capport?round=$round" | sed -n 's/^sent [0-9]* at //p')
    else
      t0=$(now_ms)
    fi
    wait_state portal 60000 || true
    took=$(( $(now_ms) - t0 ))
    if [[ $path == announced ]]; then announced+=("$took"); else probe_only+=("$took"); fi
    echo '{"captive": false}' > "$work/answer.json"
    serve ok
    wait_state online 60000 || true
  done
done
echo "-- time from the portal starting to \`portal\` published (ms; defaults: interval 30s, debounce down 2s; $rounds rounds, median first)"
printf '%-34s %s; %s\n' "announced (RA option 37, API)" "$(median "${announced[@]}")" "${announced[*]}"
printf '%-34s %s; %s\n' "probe only (the check redirected)" "$(median "${probe_only[@]}")" "${probe_only[*]}"
