#!/usr/bin/env bash
# Side by side with a real NetworkManager (issue 27): one check server's
# trouble, counted as false alarms. In one run, on one network:
#   1. check server A blackholed (nftables drops what is sent to it), 60 s;
#   2. A's name blocked: the resolver answers 0.0.0.0 for it, as Pi-hole does, 60 s;
#   3. A answers 503 Service Unavailable, 60 s;
#   4. a real outage: A, B and the resolver all dark, 60 s (everyone must see it).
# NetworkManager checks its single URI (A's name); Lifeline asks A, then B when
# A fails. A false alarm is NetworkManager's `Connectivity` turning LIMITED,
# PORTAL or NONE, or Lifeline publishing `limited` or `portal`, during a
# scenario or the recovery after it. Two Lifeline daemons run: one with the
# kernel and the probe only, one that also follows NetworkManager over D-Bus
# (the default monitors on a NetworkManager desktop).
#
# The lab is Tests/IntegrationTests/Resources/nm_lab.sh's: NetworkManager in a
# namespace of its own (with its own system bus), a second namespace holding the
# check servers (probe_server.py) and a resolver (dnsmasq). Both Lifeline
# daemons run in NetworkManager's namespace. Settings: interval 5 s for both
# (NetworkManager's `[connectivity] interval=5`); Lifeline's other settings are
# the defaults (timeout 5s, failures 2, debounce down 2s). Nothing leaves the
# machine. Needs root, ip, nft, python3, dnsmasq, dbus-daemon, dbus-monitor and
# NetworkManager; takes about 6 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
hold=${NM_SIDE_BY_SIDE_HOLD:-60}
lab=$PWD/Tests/IntegrationTests/Resources/nm_lab.sh
server=$PWD/Tests/IntegrationTests/Resources/probe_server.py

for tool in ip nft python3 dnsmasq dbus-daemon dbus-monitor NetworkManager; do
  if [[ $(id -u) -ne 0 ]] || ! command -v "$tool" >/dev/null; then
    echo "skipped: the side-by-side benchmark needs root, ip, nft, python3, dnsmasq, dbus-daemon, dbus-monitor and NetworkManager"
    exit 0
  fi
done

tag=$$
ns=llnm-$tag srv=llsv-$tag srvif=llsv$tag table=llsbs$tag
# nm_lab.sh's addresses: the server namespace's end is the gateway (10.88.1.1),
# NetworkManager's end gets 10.88.1.2. A and the gateway share an address, so
# blackholing A also silences the gateway, as when a whole uplink goes dark.
a=10.88.1.1 b=10.88.1.3 dns=10.88.1.53
name_a=check-a.lab.test name_b=check-b.lab.test
path=/check_network_status.txt
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Ends NetworkManager, the system bus and everything left in both namespaces
  # (the servers, dnsmasq, the daemons).
  "$lab" down "$tag" "$work/nm" >/dev/null 2>&1 || true
  rm -rf "/etc/netns/$ns" "$work"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
mark() { echo "$1 $(now_ms)" >> "$work/marks"; }

# The lab, then what this benchmark adds to it: B's and the resolver's
# addresses, NetworkManager's URI on A's name, both namespaces' resolver.
"$lab" up "$tag" "$work/nm"
ip -n "$srv" addr add "$b/24" dev "$srvif"
ip -n "$srv" addr add "$dns/24" dev "$srvif"
cat > "$work/nm/etc/conf.d/side-by-side.conf" <<CONF
[connectivity]
uri=http://$name_a$path
response=NetworkManager is online
interval=5
CONF
echo "nameserver $dns" > "$work/nm/resolv.conf"
mkdir -p "/etc/netns/$ns"
echo "nameserver $dns" > "/etc/netns/$ns/resolv.conf"

# dnsmasq rereads its hosts file on SIGHUP (and answers from it with TTL 0):
# blocking A's name is one rewrite, as a blocklist update is.
names() { printf '%s %s\n%s %s\n' "$1" "$name_a" "$b" "$name_b" > "$work/hosts"; }
names "$a"
ip netns exec "$srv" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
  --addn-hosts="$work/hosts" --bind-interfaces --listen-address="$dns" --port=53 --user=root \
  --pid-file="$work/dnsmasq.pid" > "$work/dnsmasq.log" 2>&1 &
pids+=($!)
dnsmasq_pid=$!

start_server() {  # MODE ADDRESS
  rm -f "$work/server-$2.out"
  ip netns exec "$srv" python3 "$server" "$1" "$2" 80 "$work/requests-$2.log" > "$work/server-$2.out" 2>&1 &
  pids+=($!)
  eval "server_${2//./_}=$!"
  for _ in $(seq 500); do grep -q ready "$work/server-$2.out" 2>/dev/null && break; sleep 0.01; done
}
stop_server() {  # ADDRESS
  local var=server_${1//./_}
  kill "${!var}" 2>/dev/null || true
  wait "${!var}" 2>/dev/null || true
}
start_server ok "$a"
start_server ok "$b"

dark() {  # ADDRESS...: the server namespace drops everything sent to them
  ip netns exec "$srv" nft add table inet "$table"
  ip netns exec "$srv" nft add chain inet "$table" in '{ type filter hook input priority 0; policy accept; }'
  for address in "$@"; do ip netns exec "$srv" nft add rule inet "$table" in ip daddr "$address" drop; done
}
light() { ip netns exec "$srv" nft delete table inet "$table"; }

"$lab" nm-start "$tag" "$work/nm"
nm_bus=unix:path=$work/nm/run/dbus/system_bus_socket
connectivity() {
  dbus-send --bus="$nm_bus" --print-reply=literal --dest=org.freedesktop.NetworkManager /org/freedesktop/NetworkManager \
    org.freedesktop.DBus.Properties.Get string:org.freedesktop.NetworkManager string:Connectivity 2>/dev/null | awk '{print $NF}'
}
# Every Connectivity change, stamped by the bus monitor (`time=` in each header).
for _ in $(seq 500); do [[ -S $work/nm/run/dbus/system_bus_socket ]] && break; sleep 0.01; done
dbus-monitor --address "$nm_bus" \
  "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/freedesktop/NetworkManager'" \
  > "$work/nm-signals.txt" 2>&1 &
pids+=($!)

config() {  # EXTRA-MONITOR
  cat <<TOML
[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
url = ["http://$name_a$path", "http://$name_b$path"]
interval = "5s"
$1
[[sink]]
kind = "log"
path = "$work/$daemon/events.jsonl"
TOML
}
for daemon in lifeline lifeline-nm; do
  mkdir -p "$work/$daemon/run" "$work/$daemon/state"
  extra=""
  [[ $daemon == lifeline-nm ]] && extra=$'\n[[monitor]]\nkind = "networkmanager"\n'
  config "$extra" > "$work/$daemon/config.toml"
  ip netns exec "$ns" env XDG_RUNTIME_DIR="$work/$daemon/run" XDG_STATE_HOME="$work/$daemon/state" \
    DBUS_SYSTEM_BUS_ADDRESS="$nm_bus" DBUS_SESSION_BUS_ADDRESS="unix:path=$work/no-session-bus" \
    LIFELINE_LOG_LEVEL=notice "$bin" daemon --config "$work/$daemon/config.toml" > "$work/$daemon/daemon.log" 2>&1 &
  pids+=($!)
done

state() { sed -n 's/.*"state":"\([a-z]*\)".*/\1/p' "$work/$1/run/lifeline/state.json" 2>/dev/null || true; }
settled() { [[ $(connectivity) == 4 && $(state lifeline) == online && $(state lifeline-nm) == online ]]; }
settle() {  # LIMIT_S: until NetworkManager says FULL and both daemons online
  local start; start=$(now_ms)
  until settled; do
    if (( $(now_ms) - start > $1 * 1000 )); then
      echo "not settled after $1 s: NetworkManager $(connectivity), lifeline $(state lifeline), lifeline-nm $(state lifeline-nm)" >&2
      return 1
    fi
    sleep 0.2
  done
}
settle 90 || { tail -20 "$work/nm/nm.log" >&2; exit 1; }
sleep 10

scenario() {  # NAME START-CMD END-CMD
  echo "  $1: ${hold} s" >&2
  mark "begin $1"
  eval "$2"
  sleep "$hold"
  eval "$3"
  mark "healed $1"
  settle 90 || true
  sleep 10  # a late alarm after the recovery counts too
  mark "end $1"
}
echo "scenarios (NetworkManager $(NetworkManager --version), $(basename "$bin") $("$bin" --version 2>/dev/null | head -1)):" >&2
scenario blackholed "dark $a" "light"
scenario blocked "names 0.0.0.0; kill -HUP $dnsmasq_pid" "names $a; kill -HUP $dnsmasq_pid"
scenario 503 "stop_server $a; start_server unavailable $a" "stop_server $a; start_server ok $a"
scenario outage "dark $a $b $dns" "light"

python3 - "$work" "${BENCH_RESULTS:-/dev/null}" "$hold" <<'PY'
import json, re, sys
work, results, hold = sys.argv[1], sys.argv[2], sys.argv[3]
marks = {}
for line in open(f"{work}/marks"):
    what, name, ms = line.split()
    marks.setdefault(name, {})[what] = int(ms) / 1000
scenarios = list(marks)

# NetworkManager: (time, connectivity) from the bus monitor's output.
NAMES = {0: "UNKNOWN", 1: "NONE", 2: "PORTAL", 3: "LIMITED", 4: "FULL"}
nm, stamp, want = [], None, False
for line in open(f"{work}/nm-signals.txt"):
    m = re.match(r"signal time=([0-9.]+)", line)
    if m:
        stamp = float(m.group(1))
    elif '"Connectivity"' in line:
        want = True
    elif want and "uint32" in line:
        nm.append((stamp, int(line.split()[-1])))
        want = False
nm_alarms = [(t, NAMES[v]) for (t, v), prev in zip(nm, [4] + [v for _, v in nm]) if v in (1, 2, 3) and prev not in (1, 2, 3)]
nm_ends = [t for (t, v), prev in zip(nm, [4] + [v for _, v in nm]) if v == 4 and prev in (1, 2, 3)]

def lifeline(daemon):
    alarms, ends = [], []
    for line in open(f"{work}/{daemon}/events.jsonl"):
        event = json.loads(line)
        if "state" not in event:
            continue
        t = event["since"] / 1e6
        if event["state"] in ("limited", "portal"):
            alarms.append((t, event["state"]))
        elif event["previous"] in ("limited", "portal"):
            ends.append(t)
    return alarms, ends

sides = [("NetworkManager 1.42", (nm_alarms, nm_ends)),
         ("Lifeline (kernel + probe)", lifeline("lifeline")),
         ("Lifeline (+ networkmanager monitor)", lifeline("lifeline-nm"))]

def cell(alarms, ends, begin, end):
    inside = [(t, s) for t, s in alarms if begin <= t < end]
    if not inside:
        return 0, "0"
    kinds = sorted({s.lower() for _, s in inside})
    first = inside[0][0] - begin
    # Time in alarm: from each alarm to the next recovery, within the scenario.
    held = sum(min([e for e in ends if e > t] + [end]) - t for t, _ in inside)
    return len(inside), "%d (%s after %.1f s, held %.0f s)" % (len(inside), " ".join(kinds), first, held)

LABELS = {"blackholed": "A blackholed", "blocked": "A's name answered 0.0.0.0",
          "503": "A answers 503", "outage": "real outage: A, B, DNS dark"}
LABELS = {k: "%s (%s s)" % (v, hold) for k, v in LABELS.items()}
print("%-36s | %s" % ("scenario", " | ".join(s for s, _ in sides)))
out = open(results, "a")
for name in scenarios:
    span = marks[name]
    cells = [cell(a, e, span["begin"], span["end"]) for _, (a, e) in sides]
    print("%-36s | %s" % (LABELS[name], " | ".join(c for _, c in cells)))
    label = "alarms, " + LABELS[name] if name == "outage" else "false alarms, " + LABELS[name]
    goal = "seen by both" if name == "outage" else "0"
    out.write("%s: NetworkManager / Lifeline / Lifeline + networkmanager monitor\t%s\t\t%s\n"
              % (label, " / ".join(str(n) for n, _ in cells), goal))
PY
