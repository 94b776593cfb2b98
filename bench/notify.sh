#!/usr/bin/env bash
# Toast (docs/benchmarks.md, "## Toast"): published degradation -> Notify at dunst -> window on screen.
set -euo pipefail
cd "$(dirname "$0")/.."
LIFELINE=$PWD/.build/release/lifeline
[[ -x $LIFELINE ]] || { swift build -c release --static-swift-stdlib --product lifeline && swift build -c release --static-swift-stdlib --product lifeline-cli; }
python3 bench/notify_latency.py "$LIFELINE" "${NOTIFY_BENCH_ROUNDS:-30}"
