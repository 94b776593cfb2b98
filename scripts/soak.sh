#!/usr/bin/env bash
# Soak: `make soak MINUTES=…` runs the daemon with the embedded defaults (netlink,
# probe, networkmanager, logind; log, dbus, libnotify, tmux, exec, tray sinks) plus an
# exec monitor, for MINUTES minutes in a network-namespace lab, while
# scripts/soak.py drives random state changes and faults at it:
#   the default route removed and restored, the carrier lost and back (the
#   upstream end of the veth pair), the internet blackholed with nftables and
#   lifted, the notification server (dunst on Xvfb) killed and started again,
#   the tmux server killed and started again, bursts of exec-monitor lines
#   (random states, a few malformed lines).
# It checks, periodically and at the end: every StateChanged signal (recorded
# by dbus-monitor) has its line in the event log by sequence, and the log has
# no sequence gap; at most one toast per outage (new Notify ids; replacing the
# toast in place is fine; a notification server started again during the
# outage may be shown it once more); RSS flat within 1 MB after the warm-up;
# no growth of file descriptors (/proc/PID/fd) or threads (/proc/PID/task).
# Prints a summary; exits 1 when an invariant broke.
#
# Needs root, ip, nft, python3, dbus-daemon, dbus-monitor, Xvfb, dunst, tmux.
# Uses .build/release/lifeline (`make soak` builds it), or $LIFELINE_BIN (the
# debug build works too; the summary names the binary). SOAK_KEEP=1 keeps the
# work folder (/tmp/lifeline-soak-TAG) for a look afterwards; SOAK_SEED fixes
# the random sequence of faults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
minutes=${1:-${MINUTES:-10}}
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
[ -x "$bin" ] || { echo "soak: no daemon binary at $bin (make release, or set LIFELINE_BIN)" >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then echo "soak: needs root (network namespaces, nftables)" >&2; exit 2; fi
for tool in ip nft python3 dbus-daemon dbus-monitor Xvfb xwininfo dunst dunstctl tmux; do
    command -v "$tool" >/dev/null || { echo "soak: needs $tool (make test-deps installs it)" >&2; exit 2; }
done

lab_init /tmp/lifeline-soak-XXXXXX
tag=$lab_tag
client=llsc-$tag upstream=llsu-$tag
gw=10.81.0.1 me=10.81.0.2
# Every process the driver starts (dunst, tmux, python helpers) is listed in
# $work/pids, so that cleanup ends them even when the driver itself is killed.
# The nftables table lives in the upstream namespace and goes with it.
lab_cleanup() {
    local p
    for p in $(cat "$work/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    for p in $(cat "$work/pids" 2>/dev/null); do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
        kill -9 "$p" 2>/dev/null
    done
    [ -S "$work/tmux/tmux-0/soak" ] && tmux -S "$work/tmux/tmux-0/soak" kill-server 2>/dev/null
    [ -n "${SOAK_KEEP:-}" ] && rm -f "$work/bus" "$work/tmux/tmux-0/soak"
}
[ -n "${SOAK_KEEP:-}" ] && LAB_KEEP_WORK=1
trap 'exit 130' INT TERM

lab_pair "$client" "$upstream" "$gw" "$me"

lab_check_server "$gw" "$upstream"

lab_session_bus
# No system bus: the networkmanager and logind monitors stay quiet, as on a
# desktop without NetworkManager.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/no-system-bus
export NO_AT_BRIDGE=1

# A display nobody uses (an X server leaves /tmp/.X11-unix/X<n>).
n=$((150 + RANDOM % 100))
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
export DISPLAY=:$n
Xvfb "$DISPLAY" -screen 0 1024x600x24 -nolisten tcp 2> "$work/xvfb.log" &
pids+=($!)
for _ in $(seq 500); do xwininfo -root >/dev/null 2>&1 && break; sleep 0.01; done

# Every StateChanged signal and every Notify call, stamped by the bus monitor.
dbus-monitor --session "type='signal',interface='org.lifeline.Lifeline1',member='StateChanged'" \
    "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" > "$work/monitor.log" 2>&1 &
pids+=($!)
for _ in $(seq 500); do grep -q 'member=NameLost' "$work/monitor.log" 2>/dev/null && break; sleep 0.01; done

mkdir -p "$work/tmux/tmux-0" "$work/config/lifeline" "$work/run" "$work/state"
chmod 700 "$work/tmux/tmux-0"
chmod 700 "$work/run"
export TMUX_TMPDIR=$work/tmux
: > "$work/feed.jsonl"
# The embedded defaults (`lifeline config show`, no config file yet) with the
# lab's check server in place of the default list (the lab has one server and
# no resolver for the others' names), and an exec monitor whose lines the driver writes.
defaults=$(XDG_CONFIG_HOME=$work/config "$bin" config show \
  | sed "s|^url = \\[\"http://nmcheck.gnome.org/\([^\"]*\)\".*|url = \"http://$gw:8080/\1\"|")
grep -q "^url = \"http://$gw:8080/" <<<"$defaults" || { echo "soak: the defaults name no probe URL to move into the lab" >&2; exit 2; }
cat > "$work/config/lifeline/config.toml" <<TOML
$defaults

[[monitor]]
kind = "exec"
command = ["tail", "-n", "0", "-F", "$work/feed.jsonl"]
TOML

# In the background, so that a signal to this script runs the cleanup at once
# (bash runs a trap only after the foreground command ends).
python3 scripts/soak.py --minutes "$minutes" --work "$work" --bin "$bin" --client "$client" \
    --upstream "$upstream" --gateway "$gw" --tag "$tag" ${SOAK_SEED:+--seed "$SOAK_SEED"} &
driver=$!
pids+=("$driver")
wait "$driver"
