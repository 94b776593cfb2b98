#!/usr/bin/env bash
# Toast: published degradation -> Notify at dunst -> window on screen.
set -euo pipefail
cd "$(dirname "$0")/.."
LIFELINE=$PWD/.build/release/lifeline
[[ -x $LIFELINE ]] || make -s release
python3 bench/notify_latency.py "$LIFELINE" "${NOTIFY_BENCH_ROUNDS:-100}"
