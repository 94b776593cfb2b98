# The network labs the benchmarks and the soak run the daemon in. Sourced, not
# run. `lab_init` starts a lab: `lab_tag` (unique to this run: the script's pid
# and a random number, short enough for interface names), the temporary folder
# `work`, the list `pids` (background processes to end) and an EXIT trap,
# `lab_teardown`, that removes everything the lab functions made even when the
# script fails or is interrupted. A script with more to clean up defines
# `lab_cleanup`, which the teardown runs after ending `pids` and before the
# namespaces and `work` go; LAB_KEEP_WORK=1 keeps `work`.

# lab_init [MKTEMP_TEMPLATE]
lab_init() {
    lab_tag=$(printf '%x%03x' $$ $((RANDOM % 4096)))
    if [ -n "${1:-}" ]; then work=$(mktemp -d "$1"); else work=$(mktemp -d); fi
    pids=()
    lab_namespaces=() lab_host_links=() lab_host_tables=()
    trap lab_teardown EXIT
}

# A network namespace, deleted (with what still runs in it) by the teardown.
lab_netns() {
    ip netns add "$1"
    lab_namespaces+=("$1")
}

# lab_veth NS_A LINK_A NS_B LINK_B: a veth pair made directly in two lab
# namespaces (so the names need only be unique there), both ends down and
# without addresses; it goes with the namespaces.
lab_veth() {
    ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
}

# lab_host_table FAMILY NAME: an nftables table on this machine with one input
# chain `in` (policy accept) for the caller's rules; deleted by the teardown.
# Tables inside a lab namespace go with it and need no registering.
lab_host_table() {
    nft add table "$1" "$2"
    lab_host_tables+=("$1 $2")
    nft add chain "$1" "$2" in '{ type filter hook input priority 0; policy accept; }'
}

# Whether process PID still runs (a zombie waiting to be reaped does not).
lab_alive() {
    [ -e "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]
}

lab_teardown() {
    set +e
    local p ns t _
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in $(seq 100); do lab_alive "$p" || break; sleep 0.02; done
        kill -9 "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    declare -F lab_cleanup >/dev/null && lab_cleanup
    for t in "${lab_host_tables[@]}"; do nft delete table $t 2>/dev/null; done
    for ns in "${lab_namespaces[@]}"; do
        # What still runs there (an `ip netns exec` child) would keep it alive without its name.
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    for p in "${lab_host_links[@]}"; do ip link del "$p" 2>/dev/null; done
    if [ -n "${LAB_KEEP_WORK:-}" ]; then echo "lab: work folder kept: $work" >&2; else rm -rf "$work"; fi
    return 0
}

# Two namespaces joined by a veth pair: `client` (v0, ADDRESS/24, the default
# route via GATEWAY) and `upstream` (v1, GATEWAY/24), where the check server runs.
lab_pair() {
    local client=$1 upstream=$2 gateway=$3 address=$4
    lab_netns "$client"
    lab_netns "$upstream"
    ip -n "$client" -batch - <<IP
link add v0 type veth peer name v1 netns $upstream
addr add $address/24 dev v0
link set lo up
link set v0 up
IP
    ip -n "$upstream" -batch - <<IP
addr add $gateway/24 dev v1
link set lo up
link set v1 up
IP
    ip -n "$client" route add default via "$gateway"
}

# One namespace NS whose veth (NS_LINK, NS_ADDRESS/24) reaches this machine's
# end (HOST_LINK, HOST_ADDRESS/24), its default route and resolver on that end,
# so no packet or lookup leaves the lab.
lab_single() {
    local ns=$1 host_link=$2 ns_link=$3 host_address=$4 ns_address=$5
    lab_netns "$ns"
    mkdir -p "/etc/netns/$ns"
    echo "nameserver $host_address" > "/etc/netns/$ns/resolv.conf"
    ip link add "$host_link" type veth peer name "$ns_link" netns "$ns"
    lab_host_links+=("$host_link")
    ip addr add "$host_address/24" dev "$host_link"
    ip link set "$host_link" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$ns_address/24" dev "$ns_link"
    ip -n "$ns" link set "$ns_link" up
    ip -n "$ns" route add default via "$host_address"
}

# The probe's check server on ADDRESS:8080 (inside NETNS when given), answering
# "ok" and logging each request to $work/requests.log; returns once it listens.
lab_check_server() {
    local address=$1 netns=${2:-}
    local server
    server=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/Tests/IntegrationTests/Resources/probe_server.py
    if [ -n "$netns" ]; then
        ip netns exec "$netns" python3 "$server" ok "$address" 8080 "$work/requests.log" > "$work/server.out" &
    else
        python3 "$server" ok "$address" 8080 "$work/requests.log" > "$work/server.out" &
    fi
    pids+=($!)
    for _ in $(seq 500); do grep -q ready "$work/server.out" 2>/dev/null && break; sleep 0.01; done
}

# A private session bus on a socket file (an abstract socket would belong to
# the namespace it was made in), exported as the session bus.
lab_session_bus() {
    dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/bus" 2> "$work/bus.log" &
    pids+=($!)
    for _ in $(seq 500); do [ -S "$work/bus" ] && break; sleep 0.01; done
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
}

# The embedded defaults as `lifeline config show` prints them (every monitor
# and sink a desktop runs), the probe's check URL moved to the lab's server at
# ADDRESS. There is no system bus in the lab: the networkmanager and logind
# monitors wait for one quietly, as on a desktop without NetworkManager.
lab_default_config() {
    local address=$1
    export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/no-system-bus
    local config
    # The lab's one check server in place of the default list (the lab has no
    # resolver for the other servers' names).
    config=$("$bin" config show | sed "s|^url = \\[\"http://nmcheck.gnome.org/\([^\"]*\)\".*|url = \"http://$address:8080/\1\"|")
    grep -q "^url = \"http://$address:8080/" <<<"$config" || { echo "lab: the defaults name no probe URL to move into the lab" >&2; return 1; }
    printf '%s\n' "$config"
}

now_ms() { date +%s%3N; }
# The daemon's published state, from its runtime state file under $work/run.
state() { sed -n 's/.*"state":"\([a-z]*\)".*/\1/p' "$work/run/lifeline/state.json" 2>/dev/null || true; }
# wait_state STATE LIMIT_MS: polls the state every 10 ms; says so and fails
# (status 1) when STATE is not reached in time. A script may define its own.
wait_state() {
    local start; start=$(now_ms)
    until [ "$(state)" = "$1" ]; do
        (( $(now_ms) - start > $2 )) && { echo "  timed out waiting for $1 (state $(state))"; return 1; }
        sleep 0.01
    done
}
