#!/usr/bin/env bash
# Takes docs/toast.png, the README's picture: the toast `lifeline daemon` shows
# when the connection drops, drawn by a real dunst on a headless X server.
# Usage: scripts/screenshot-toast.sh [LIFELINE_BIN] [OUTPUT]
# Needs Xvfb, dbus-daemon, dunst, xwininfo and ImageMagick's import.
#
# scripts/screenshot-toast.sh servers: the toast on mako and swaync (headless
# sway), GNOME Shell (headless) and KDE Plasma (plasmashell on Xvfb), offline,
# portal and back online side by side, as artifacts/toast-<server>.png. The
# outage script of `ToastServersTests` draws them (needs root, the test build
# and the Makefile's TEST_PACKAGES).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = servers ]; then
  swift build --build-tests >/dev/null
  swift test --skip-build --filter ToastServersTests
  ls artifacts/toast-mako.png artifacts/toast-swaync.png artifacts/toast-gnome-shell.png artifacts/toast-plasma.png
  exit
fi
bin=$(realpath "${1:-.build/debug/lifeline}")
output=${2:-docs/toast.png}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Polls (10 ms steps, at most 10 s) until the command succeeds.
wait_for() {
  for _ in $(seq 1000); do "$@" >/dev/null 2>&1 && return 0; sleep 0.01; done
  echo "screenshot-toast.sh: timed out waiting for: $*" >&2
  return 1
}

display=:$((150 + RANDOM % 100))
while [ -e "/tmp/.X11-unix/X${display#:}" ]; do display=:$((${display#:} + 1)); done
Xvfb "$display" -screen 0 900x300x24 -nolisten tcp & pids+=($!)
export DISPLAY=$display
dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/bus" & pids+=($!)
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus NO_AT_BRIDGE=1
wait_for test -S "$work/bus"
wait_for xwininfo -root
# A desktop-sized toast rather than dunst's compact default.
cat > "$work/dunstrc" <<'RC'
[global]
font = DejaVu Sans 11
width = 440
offset = 16x16
padding = 12
horizontal_padding = 14
frame_width = 2
corner_radius = 6
format = "<b>%s</b>\n%b"
[urgency_critical]
background = "#2b2b2b"
foreground = "#f0f0f0"
frame_color = "#e05050"
[urgency_normal]
background = "#2b2b2b"
foreground = "#f0f0f0"
frame_color = "#e0a030"
RC
dunst -config "$work/dunstrc" & pids+=($!)
# Asked without starting anything: dunstctl would have the bus activate a second dunst.
server_up() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications | grep -q 'boolean true'
}
wait_for server_up

mkdir -p "$work/config/lifeline" "$work/state" "$work/run"
chmod 700 "$work/run"
# An exec monitor stands in for the network: online, then the Wi-Fi's route goes.
cat > "$work/network.sh" <<'EOF'
#!/bin/sh
echo '{"state": "online", "interface": "wlan0", "kind": "wifi"}'
sleep 1.5
echo '{"state": "offline", "interface": "wlan0", "kind": "wifi", "reason": "default route via wlan0 removed"}'
exec sleep 600
EOF
chmod 700 "$work/network.sh"
cat > "$work/config/lifeline/config.toml" <<EOF
[[monitor]]
kind = "exec"
command = ["$work/network.sh"]

[[sink]]
kind = "libnotify"
EOF
XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run \
  "$bin" daemon > "$work/daemon.log" 2>&1 & pids+=($!)

toast_window() { xwininfo -root -children | awk '/"Dunst"/ { print $1; exit }'; }
toast_shown() { [ "$(dunstctl count displayed)" -ge 1 ]; }
wait_for toast_shown || { cat "$work/daemon.log" >&2; exit 1; }
sleep 0.3  # dunst draws the text after it maps the window: let it finish
import -window "$(toast_window)" "$output"
echo "$output"
