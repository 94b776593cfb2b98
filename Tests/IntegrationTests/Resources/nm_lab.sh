#!/bin/bash
# A real NetworkManager, isolated: its own network namespace (a veth whose peer
# sits in a second namespace with the check server), its own system bus on a
# socket file, and private copies of /run, /etc/NetworkManager,
# /var/lib/NetworkManager and /etc/resolv.conf. It never touches the machine's
# own network or NetworkManager.
#
#   nm_lab.sh up TAG DIR        namespaces, veth, check server, system bus
#   nm_lab.sh nm-start TAG DIR  NetworkManager (background; pid in DIR/nm.pid)
#   nm_lab.sh nm-stop TAG DIR
#   nm_lab.sh block|unblock TAG the check server drops / answers again
#   nm_lab.sh carrier TAG off|on
#   nm_lab.sh down TAG DIR      everything above, gone
set -eu
# The benchmarks' lab functions (each command here is a run of its own: no teardown trap).
. "$(dirname "$0")/../../../bench/lib/lab.sh"
cmd=$1 tag=$2 dir=${3:-}
ns=llnm-$tag srv=llsv-$tag
nmif=llnm$tag srvif=llsv$tag
table=llnm$tag

case $cmd in
up)
    mkdir -p "$dir/run/dbus" "$dir/run/NetworkManager" "$dir/lib" "$dir/etc/conf.d" "$dir/etc/system-connections" "$dir/www"
    lab_netns "$ns"
    lab_netns "$srv"
    lab_veth "$ns" "$nmif" "$srv" "$srvif"
    ip -n "$ns" link set lo up
    ip -n "$srv" link set lo up
    ip -n "$srv" addr add 10.88.1.1/24 dev "$srvif"
    ip -n "$srv" link set "$srvif" up
    echo "NetworkManager is online" >"$dir/www/check.txt"
    (cd "$dir/www" && exec ip netns exec "$srv" python3 -m http.server --bind 10.88.1.1 8088 >"$dir/www.log" 2>&1) &
    echo $! >"$dir/www.pid"
    cat >"$dir/dbus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
CONF
    dbus-daemon --config-file="$dir/dbus.conf" --nofork --nopidfile >"$dir/dbus.log" 2>&1 &
    echo $! >"$dir/dbus.pid"
    cat >"$dir/etc/NetworkManager.conf" <<CONF
[main]
plugins=keyfile
no-auto-default=*
dns=none
rc-manager=unmanaged
systemd-resolved=false
hostname-mode=none
auth-polkit=false
dhcp=internal

[keyfile]
unmanaged-devices=except:interface-name:$nmif
path=/etc/NetworkManager/system-connections

[connectivity]
uri=http://10.88.1.1:8088/check.txt
response=NetworkManager is online
interval=5
CONF
    cat >"$dir/etc/system-connections/lab.nmconnection" <<CONF
[connection]
id=Lab wired
type=ethernet
interface-name=$nmif

[ipv4]
method=manual
address1=10.88.1.2/24,10.88.1.1

[ipv6]
method=disabled
CONF
    chmod 600 "$dir/etc/system-connections/lab.nmconnection"
    : >"$dir/resolv.conf"
    ;;
nm-start)
    ip netns exec "$ns" unshare --mount --uts --propagation private sh -c "
        mount --bind '$dir/run' /run
        mount --bind '$dir/lib' /var/lib/NetworkManager
        mount --bind '$dir/etc' /etc/NetworkManager
        mount --bind '$dir/resolv.conf' /etc/resolv.conf
        mount -o remount,bind,ro /sys
        exec env DBUS_SYSTEM_BUS_ADDRESS='unix:path=$dir/run/dbus/system_bus_socket' NetworkManager --debug \
            --config=/etc/NetworkManager/NetworkManager.conf --config-dir=/etc/NetworkManager/conf.d \
            --state-file='$dir/lib/NetworkManager.state' --pid-file='$dir/run/nm-lab.pid'" >>"$dir/nm.log" 2>&1 &
    echo $! >"$dir/nm.pid"
    ;;
nm-stop)
    if [ -s "$dir/nm.pid" ]; then
        pid=$(cat "$dir/nm.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        kill -9 "$pid" 2>/dev/null || true
        : >"$dir/nm.pid"
    fi
    ;;
block)
    ip netns exec "$srv" nft add table inet "$table"
    ip netns exec "$srv" nft add chain inet "$table" in "{ type filter hook input priority 0; policy accept; }"
    ip netns exec "$srv" nft add rule inet "$table" in tcp dport 8088 drop
    ;;
unblock)
    ip netns exec "$srv" nft delete table inet "$table"
    ;;
carrier)
    if [ "$4" = off ]; then ip -n "$srv" link set "$srvif" down; else ip -n "$srv" link set "$srvif" up; fi
    ;;
down)
    "$0" nm-stop "$tag" "$dir" || true
    for f in www dbus; do [ -s "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null || true; done
    # The http server runs under `ip netns exec`: end what is left in the namespace.
    for pid in $(ip netns pids "$srv" 2>/dev/null) $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
    ip netns del "$srv" 2>/dev/null || true
    ;;
*)
    echo "unknown command $cmd" >&2
    exit 2
    ;;
esac
