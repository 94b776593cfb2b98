#!/usr/bin/env bash
# Toast on each server: published
# outage -> the notification server's reply to Notify, on dunst, mako, swaync,
# GNOME Shell and KDE Plasma. Needs root (the servers run as `nobody`) and TEST_PACKAGES.
set -euo pipefail
cd "$(dirname "$0")/.."
LIFELINE=${LIFELINE:-$PWD/.build/release/lifeline}
[[ -x $LIFELINE ]] || make -s release
python3 bench/toast_servers.py "$LIFELINE" "${TOAST_BENCH_ROUNDS:-50}" "$@"
