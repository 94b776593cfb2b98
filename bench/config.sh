#!/usr/bin/env bash
# Config loading: what `lifeline config check` (and the daemon's start and every
# SIGHUP) costs now that TOML is parsed in a child process.
# Run by `make bench` after the release build (--static-swift-stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/.build/release/lifeline
cli=$PWD/.build/release/lifeline-cli

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sync  # measure the freshly linked binaries clean
cat > "$work/config.toml" <<'TOML'
[debounce]
down = "2s"
up = "1s"

[[monitor]]
kind = "netlink"

[[monitor]]
kind = "probe"
interval = "30s"
timeout = "5s"

[[sink]]
kind = "log"
keep = 3

[[sink]]
kind = "dbus"

[[sink]]
kind = "libnotify"

[[sink]]
kind = "tmux"
format = "{icon} {state}"
TOML

echo "-- config check: a file (parsed in a child) and no file (nothing to parse)"
XDG_CONFIG_HOME=$work/none hyperfine -N --warmup 5 --runs 100 --style basic \
  "$bin config check $work/config.toml" "$bin config check"
echo "-- the child alone: lifeline-cli config parse-toml (hyperfine subtracts the shell)"
hyperfine --warmup 5 --runs 100 --style basic "$cli config parse-toml < $work/config.toml"
