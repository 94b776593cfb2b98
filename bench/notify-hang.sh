#!/usr/bin/env bash
# A hung notification server:
# StateChanged latency and GetStatus()/Check() round trips with dunst answering,
# then with dunst stopped (SIGSTOP: it takes Notify and never replies).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release
[[ -x $BIN/lifeline && -x $BIN/lifeline-cli ]] || make -s release
[[ -x $BIN/lifeline-bench ]] || swift build -c release --static-swift-stdlib --product lifeline-bench
python3 bench/notify_hang.py "$BIN/lifeline" "$BIN/lifeline-bench" "${NOTIFY_HANG_ROUNDS:-40}"
