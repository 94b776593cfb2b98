#!/usr/bin/env bash
# Gateway benchmark: what reading the default route and its router's neighbour
# entry from rtnetlink costs (`lifeline diagnose`'s gateway row: a fresh
# NETLINK_ROUTE socket, a route dump and a neighbour dump), for a router that
# answers, over IPv4 and over a link-local IPv6 router. The probe pays the same
# read once after a failed probe.
# A private network namespace and a veth pair; nothing leaves the machine.
# Needs root and ip.   bench/gateway.sh [RUNS] (default 50); BIN= the lifeline binary.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
bin=${BIN:-$PWD/.build/release/lifeline}
[[ -x $PWD/.build/release/lifeline-cli ]] || bin=${BIN:-$PWD/.build/debug/lifeline}
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "skipped: the gateway benchmark needs root and ip"
  exit 0
fi
source bench/lib/lab.sh
lab_init
ns=llgw-$lab_tag a=lga$lab_tag b=lgb$lab_tag
lab_single "$ns" "$a" "$b" 10.216.9.1 10.216.9.2
# IPv6 through a link-local router, as on most home networks.
ip addr add fe80::1/64 dev "$a" nodad
ip -n "$ns" addr add fd00:216::2/128 dev "$b" nodad
ip -n "$ns" -6 route add default via fe80::1 dev "$b"

echo "binary: $bin; $runs runs per family; the gateway row of \`lifeline diagnose --json\`"

# The first run finds no entry and nudges the router; the next ones find it
# REACHABLE (or STALE): one read, nothing sent.
for family in ipv4 ipv6; do
  url=http://10.216.9.1:9/; [[ $family == ipv6 ]] && url=http://[fd00:216::1]:9/
  for _ in $(seq "$runs"); do
    ip netns exec "$ns" env LC_ALL=C.UTF-8 XDG_CONFIG_HOME=/nonexistent "$bin" diagnose --json --timeout 200ms --url "$url" || true
    echo
  done | python3 -c '
import json, sys, statistics
family = sys.argv[1]
ms, marks = [], set()
for line in sys.stdin:
    line = line.strip()
    if not line: continue
    for c in json.loads(line)["checks"]:
        if c["layer"] == "gateway" and c["family"] == family:
            ms.append(c["ms"]); marks.add(c["result"])
ms.sort()
print(f"{family}: gateway row {sorted(marks)}: median {statistics.median(ms):.2f} ms, p95 {ms[int(len(ms)*0.95)-1]:.2f} ms, max {ms[-1]:.2f} ms (n={len(ms)})")
' "$family"
done
