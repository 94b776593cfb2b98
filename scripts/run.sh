#!/usr/bin/env bash
# `make run`: the daemon in the foreground with its embedded default config, and
# `lifeline watch` beside it printing each published state, one line each. Ctrl-C
# reaches the daemon (the foreground job), which stops; then the watcher is
# stopped too, so nothing is left running. The daemon's exit status is ours.
#
# BUILD_DIR: the folder with the binaries (default .build/release).
set -u
bin=${BUILD_DIR:-.build/release}
"$bin/lifeline" watch &
watcher=$!
stop_watcher() {
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
}
trap stop_watcher EXIT
"$bin/lifeline" daemon "$@"
