#!/usr/bin/env bash
# Lifeline side by side with GLib's GNetworkMonitor (what GNOME applications use
# when no NetworkManager runs: its netlink backend), in the same network
# namespace and the same run, on the same scenarios, and what a GLib
# application sees with Lifeline's GIO module installed (its default monitor
# is then Lifeline's):
#   default route removed (and restored); carrier lost on the peer (and back);
#   internet blackholed with nftables while traffic flows, and on an idle machine
#   (netlink sees nothing); the check server down (and back); 150 veth pairs
#   created and deleted; a docker-style bridge with an address and a route (not
#   default); 50 flaps in 10 s, of the carrier and of the default route.
# For each: time to the first correct signal, signals sent (spurious ones
# counted), whether the right verdict was reached. Prints one table. Then the
# time from a change to the application being told, 200 each: a state Lifeline
# publishes → notify::connectivity through the module; a route change →
# network-changed through GLib's netlink monitor (which notifies no
# connectivity). Last, the memory each monitor takes in a small C application.
#
# Two private namespaces: the client (the daemon and bench/gnetworkmonitor.py)
# and the upstream (the gateway, the check server, nftables). Nothing leaves
# the machine. The daemon runs the netlink and probe monitors (default settings,
# the URL pointing at the lab) and the log sink, with the default debounce
# (down 2s, up 1s), on a private session bus where the module's application
# finds it. Needs root, ip, nft, python3, dbus-daemon, cc and Debian's python3-gi.
# Uses .build/release/lifeline (built by `make bench`), or $LIFELINE_BIN.
# GNM_BENCH_IDLE=0 skips the idle blackhole (the longest scenario, about 70 s a
# round); GNM_BENCH_IDLE_ROUNDS (default 3) sets how many rounds it runs. Each
# round blackholes the upstream the moment a probe's request reaches the check
# server (its access log), the worst moment: the next probe is a whole
# interval away.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
server=$PWD/Tests/IntegrationTests/Resources/probe_server.py
idle=${GNM_BENCH_IDLE:-1}
idle_rounds=${GNM_BENCH_IDLE_ROUNDS:-3}
[ -x "$bin" ] || make -s release
if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null || ! /usr/bin/python3 -c 'import gi' 2>/dev/null; then
    echo "gnetworkmonitor bench: needs root, nft and python3-gi (gir1.2-glib-2.0); skipped"; exit 0
fi

lab_init
tag=$lab_tag
client=llgc-$tag upstream=llgu-$tag
gw=10.78.0.1 me=10.78.0.2
lab_cleanup() { [ -n "${GNM_BENCH_KEEP:-}" ] && cp -r "$work" /tmp/gnm-bench-$tag; }

lab_pair "$client" "$upstream" "$gw" "$me"
in_upstream() { ip netns exec "$upstream" "$@"; }  # foreground only: in the background its pid would not be the command's
lab_session_bus
make -s gio-module
gio_modules=$PWD/.build/gio
# GLib alone: its netlink monitor, even where Lifeline's module is installed.
glib_env=(env -u GIO_EXTRA_MODULES GIO_USE_NETWORK_MONITOR=netlink)

check_server() {
    ip netns exec "$upstream" python3 "$server" ok "$gw" 8080 "$work/requests.log" >> "$work/server.out" &
    server_pid=$!
    pids+=("$server_pid")
}
check_server
# An echo server: the user's traffic in the "traffic flowing" blackhole.
ip netns exec "$upstream" python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('$gw', 7))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)
" &
pids+=($!)
for _ in $(seq 500); do grep -q ready "$work/server.out" 2>/dev/null && break; sleep 0.01; done

mkdir -p "$work/config" "$work/log" "$work/run" "$work/state"
cat > "$work/config/config.toml" <<TOML
[debounce]
down = "2s"
up = "1s"

[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
url = "http://$gw:8080/check_network_status.txt"

[[sink]]
kind = "log"
path = "$work/log/events.jsonl"
TOML

# Both observers start before the daemon, so they see the same changes.
ip netns exec "$client" "${glib_env[@]}" /usr/bin/python3 bench/gnetworkmonitor.py > "$work/gnm.out" &
pids+=($!)
python3 bench/stamp_lines.py "$work/log/events.jsonl" > "$work/lifeline.out" &
pids+=($!)
XDG_RUNTIME_DIR=$work/run XDG_STATE_HOME=$work/state \
    ip netns exec "$client" "$bin" daemon --config "$work/config/config.toml" 2> "$work/daemon.log" &
daemon=$!
pids+=("$daemon")

now_us() { date +%s%6N; }
# wait_state STATE LIMIT_MS: the daemon's published state (runtime state file), polled every 10 ms.
wait_state() {
    local start; start=$(now_ms)
    until [ "$(state)" = "$1" ]; do
        if (( $(now_ms) - start > $2 )); then echo "  (lifeline still '$(state)' after $2 ms, expected $1)" >&2; return 0; fi
        sleep 0.01
    done
}
# scenario NAME EXPECTED SETTLE_S COMMAND...: marks the start, runs the
# change, waits for Lifeline's verdict (at most 90 s), then SETTLE_S more
# seconds to catch late or repeated signals from either side.
scenario() {
    local name=$1 expected=$2 settle=$3; shift 3
    # At a random point of the daemon's one-second rhythms (probe spacing,
    # counter samples), as a real change would come; `at_probe` instead waits
    # for the next probe to reach the check server.
    if [ -n "${at_probe:-}" ]; then next_probe; else sleep "$(printf '0.%03d' $((RANDOM % 1000)))"; fi
    local t0; t0=$(now_us)
    "$@"
    wait_state "$expected" 90000
    sleep "$settle"
    echo "$t0 $(now_us) $expected $name" >> "$work/marks"
}

# Returns the moment the next probe request reaches the check server (polled
# every 10 ms; at most one interval and a bit away).
next_probe() {
    local seen; seen=$(wc -l < "$work/requests.log")
    local start; start=$(now_ms)
    until [ "$(wc -l < "$work/requests.log")" -gt "$seen" ]; do
        if (( $(now_ms) - start > 40000 )); then echo "  (no probe at the check server in 40 s)" >&2; return 0; fi
        sleep 0.01
    done
}

wait_state online 20000
# The application with Lifeline's module starts once the daemon serves its
# name (before, GLib would have fallen back to its own monitor).
ip netns exec "$client" env GIO_EXTRA_MODULES="$gio_modules" /usr/bin/python3 bench/gnetworkmonitor.py > "$work/gio.out" &
pids+=($!)
for _ in $(seq 500); do [ -s "$work/gio.out" ] && break; sleep 0.01; done
grep -q '^backend LifelineNetworkMonitor ' "$work/gio.out" || { echo "the module's application runs $(head -1 "$work/gio.out")" >&2; exit 1; }
sleep 2  # the first probe and the initial dumps are behind us

route_del() { ip -n "$client" route del default via "$gw"; }
route_add() { ip -n "$client" route add default via "$gw"; }
peer_down() { ip -n "$upstream" link set v1 down; }
peer_up() { ip -n "$upstream" link set v1 up; }
blackhole() {
    in_upstream nft -f - <<NFT
table inet lifeline_bench_$tag {
    chain in { type filter hook input priority 0; policy accept; iifname "v1" drop; }
}
NFT
}
heal() { in_upstream nft delete table inet "lifeline_bench_$tag"; }
server_down() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; }
traffic_start() {
    ip netns exec "$client" python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    try: s.sendto(b'x' * 32, ('$gw', 7))
    except OSError: pass
    time.sleep(0.05)
" 2>/dev/null &
    traffic=$!
    pids+=("$traffic")
    # The user's traffic has been flowing (and answered) for a while: longer than
    # the counter watcher's longest sleep (the probe interval, 30 s), which it
    # only shortens to a second once it sees packets leave. Traffic that starts
    # at the moment of the loss is found as on an idle machine, by the next probe.
    sleep "${GNM_TRAFFIC_LEAD:-32}"
}
traffic_stop() { kill "$traffic"; wait "$traffic" 2>/dev/null || true; }
veth_churn() {
    {
        for i in $(seq 150); do echo "link add vb${i}a type veth peer name vb${i}b"; echo "link set vb${i}a up"; echo "link set vb${i}b up"; done
        for i in $(seq 150); do echo "link del vb${i}a"; done
    } | ip -n "$client" -batch -
}
docker_bridge() {
    ip -n "$client" -batch - <<IP
link add docker0 type bridge
addr add 172.17.0.1/16 dev docker0
link add veth0c type veth peer name eth0c
link set veth0c master docker0
link set veth0c up
link set eth0c up
link set docker0 up
route add 10.200.0.0/16 via 172.17.0.2 dev docker0
IP
    sleep 2
    ip -n "$client" link del veth0c
    ip -n "$client" link del docker0
}
carrier_flaps() {
    for _ in $(seq 50); do peer_down; sleep 0.09; peer_up; sleep 0.09; done
}
route_flaps() {
    for _ in $(seq 50); do route_del; sleep 0.09; route_add; sleep 0.09; done
}

scenario "default route removed" offline 1 route_del
scenario "default route restored" online 1 route_add
scenario "carrier lost on the peer" offline 1 peer_down
scenario "carrier back" online 1 peer_up
traffic_start
scenario "blackhole, traffic flowing" limited 1 blackhole
scenario "blackhole lifted, traffic flowing" online 1 heal
traffic_stop
if [ "$idle" = 1 ]; then
    sleep 3
    for round in $(seq "$idle_rounds"); do
        at_probe=1 scenario "blackhole, idle (round $round)" limited 1 blackhole
        scenario "blackhole lifted, idle (round $round)" online 1 heal
    done
fi
scenario "check server down" limited 1 server_down
scenario "check server back" online 1 check_server
scenario "150 veth pairs created and deleted" online 3 veth_churn
scenario "docker-style bridge, address and route" online 3 docker_bridge
scenario "50 carrier flaps in 10 s" online 4 carrier_flaps
scenario "50 default route flaps in 10 s" online 4 route_flaps

echo "GLib's monitor: $(head -1 "$work/gnm.out" | cut -d' ' -f2) (no NetworkManager on a system bus here); with the module: $(head -1 "$work/gio.out" | cut -d' ' -f2); times from the change"
python3 bench/gnetworkmonitor_table.py "$work/marks" "$work/lifeline.out" "$work/gnm.out" "$work/gio.out"

# From a change to the application's notify::connectivity. Lifeline's side: the
# daemon above gives way to one fed observations (zero debounce windows, so a
# state is published the moment it is read); the module's application, still
# running, follows the new daemon. GLib's side: default route changes in the
# namespace of its application.
kill "$daemon"; wait "$daemon" 2>/dev/null || true
mkdir -p "$work/fed/config" "$work/fed/log" "$work/fed/run" "$work/fed/state"
: > "$work/fed/feed"
cat > "$work/fed/config/config.toml" <<TOML
[debounce]
down = "0s"
up = "0s"

[[monitor]]
kind = "exec"
command = ["tail", "-n", "+1", "-F", "$work/fed/feed"]

[[sink]]
kind = "log"
path = "$work/fed/log/events.jsonl"
TOML
XDG_RUNTIME_DIR=$work/fed/run XDG_STATE_HOME=$work/fed/state "$bin" daemon --config "$work/fed/config/config.toml" 2> "$work/fed/daemon.log" &
pids+=($!)
echo '{"state":"online","interface":"eth0"}' >> "$work/fed/feed"
for _ in $(seq 1000); do grep -q '"state":"online"' "$work/fed/log/events.jsonl" 2>/dev/null && break; sleep 0.01; done
sleep 0.5  # the module has read the new daemon's properties
rounds=${GNM_BENCH_LATENCY_ROUNDS:-200}
python3 bench/gio_latency.py lifeline "$work/fed/feed" "$work/fed/log/events.jsonl" "$work/gio.out" "$rounds"
python3 bench/gio_latency.py netlink "$client" "$gw" "$work/gnm.out" "$rounds"

# What each monitor takes in an application: the same small C program (it also
# connects to the session bus, as a desktop application does), once with GLib's
# netlink monitor, once with Lifeline's module, both idle after start.
cc -O2 -o "$work/monitor-client" Tests/IntegrationTests/Resources/network_monitor_client.c $(pkg-config --cflags --libs gio-2.0)
measure_client() {
    local label=$1; shift
    "$@" "$work/monitor-client" > "$work/client-$label.out" 2>&1 &
    local pid=$!
    pids+=("$pid")
    for _ in $(seq 500); do grep -q ' start ' "$work/client-$label.out" 2>/dev/null && break; sleep 0.01; done
    sleep 0.5
    printf '%s %s %s %s %s\n' "$label" "$(awk '{print $3}' "$work/client-$label.out" | head -1)" \
        "$(awk '/^Rss:/ {print $2}' "/proc/$pid/smaps_rollup")" "$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")" \
        "$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
{
    measure_client netlink env -u GIO_EXTRA_MODULES GIO_USE_NETWORK_MONITOR=netlink
    measure_client lifeline env GIO_EXTRA_MODULES="$gio_modules"
} > "$work/memory"
echo "memory of a C application (kB), idle after g_network_monitor_get_default():"
awk '{ printf "  %-9s %-24s RSS %6d kB  PSS %6d kB  threads %d\n", $1, $2, $3, $4, $5; rss[NR] = $3; pss[NR] = $4 }
     END { printf "the module adds to an application: RSS %+d kB, PSS %+d kB (against GLib'"'"'s netlink monitor)\n", rss[2] - rss[1], pss[2] - pss[1] }' "$work/memory"
