#!/usr/bin/env bash
# artifacts/toast-plasma.png: the toast on KDE Plasma 5.27 (plasmashell on a
# headless X server, its own session bus), offline, portal and back online side
# by side. Usage: scripts/screenshot-toast-plasma.sh [LIFELINE_BIN]
# Needs Xvfb, dbus-daemon, plasma-workspace, plasma-desktop and ImageMagick.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-.build/debug/lifeline}")
mkdir -p artifacts
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${bus_pid:-}" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
wait_for() {
  for _ in $(seq 3000); do "$@" >/dev/null 2>&1 && return 0; sleep 0.02; done
  echo "screenshot-toast-plasma.sh: timed out waiting for: $*" >&2
  return 1
}

display=:$((150 + RANDOM % 100))
while [ -e "/tmp/.X11-unix/X${display#:}" ]; do display=:$((${display#:} + 1)); done
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp & pids+=($!)
mkdir -p "$work/home" "$work/run" && chmod 700 "$work/run"
export DISPLAY=$display HOME=$work/home XDG_RUNTIME_DIR=$work/run QT_QPA_PLATFORM=xcb NO_AT_BRIDGE=1
# The standard session services: Plasma has the bus start kded5, kglobalaccel and more.
eval "$(dbus-launch --sh-syntax)"
bus_pid=$DBUS_SESSION_BUS_PID
# What the bus starts needs the display too.
dbus-update-activation-environment DISPLAY HOME XDG_RUNTIME_DIR QT_QPA_PLATFORM NO_AT_BRIDGE
wait_for xwininfo -root
# plasmashell gives up unless the activity manager runs; the bus does not start it.
/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd >/dev/null 2>&1 & pids+=($!)
plasmashell >"$work/plasma.log" 2>&1 & pids+=($!)
server_up() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications | grep -q 'boolean true'
}
wait_for server_up

mkdir -p "$work/config/lifeline" "$work/state" "$work/drun"
chmod 700 "$work/drun"
touch "$work/feed"
cat > "$work/config/lifeline/config.toml" <<CONF
[debounce]
down = "0s"
up = "0s"
[[monitor]]
kind = "exec"
command = ["tail", "-n", "+1", "-F", "$work/feed"]
[[sink]]
kind = "libnotify"
CONF
XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/drun \
  "$bin" daemon > "$work/daemon.log" 2>&1 & pids+=($!)
say() { echo "$1" >> "$work/feed"; sleep 2; }  # Plasma slides its popups in
say '{"state": "online", "interface": "wlan0", "kind": "wifi"}'
say '{"state": "offline", "interface": "wlan0", "kind": "wifi", "reason": "default route via wlan0 removed"}'
import -window root -crop 420x240+860+516 +repage "$work/offline.png"
say '{"state": "portal", "interface": "wlan0", "kind": "wifi", "reason": "redirected to http://login.hotel.test/"}'
import -window root -crop 420x240+860+516 +repage "$work/portal.png"
say '{"state": "online", "interface": "wlan0", "kind": "wifi"}'
import -window root -crop 420x240+860+516 +repage "$work/online.png"
convert "$work/offline.png" "$work/portal.png" "$work/online.png" +append artifacts/toast-plasma.png
echo artifacts/toast-plasma.png
