#!/usr/bin/env bash
# Status bars: (1) whole-process time of `lifeline status --format '{icon} {state}'`
# with a daemon running (what a tmux `#()` or a bar pays every second), and (2) the
# time from a published transition to the tmux option `@lifeline` holding it.
# Uses .build/release/lifeline (make release: -c release --static-swift-stdlib).
# Goals: status <= 2 ms mean; push <= 20 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
[[ -x $bin ]] || { echo "build it first: make release" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tmux missing (make bench installs it)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine missing" >&2; exit 1; }

work=$(mktemp -d /tmp/lifeline-bench-tmux.XXXXXX)
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run TMUX_TMPDIR=$work/t
unset TMUX TMUX_PANE
mkdir -p "$XDG_CONFIG_HOME/lifeline" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$TMUX_TMPDIR"
daemon=
cleanup() {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
  tmux -L bench kill-server 2>/dev/null || true
  # The monitor's `cat` outlives the monitor, blocked opening the FIFO for a
  # writer: one open and close lets it read EOF and end.
  [[ -p $work/fifo ]] && : <>"$work/fifo"
  rm -rf "$work"
}
trap cleanup EXIT

# An exec monitor fed through a FIFO, so the benchmark decides every transition.
mkfifo "$work/fifo"
printf '#!/bin/sh\nwhile :; do cat %q; done\n' "$work/fifo" > "$work/monitor.sh"
chmod 700 "$work/monitor.sh"
debounce_ms=100
cat > "$XDG_CONFIG_HOME/lifeline/config.toml" <<TOML
[debounce]
down = "${debounce_ms}ms"
up = "${debounce_ms}ms"

[[monitor]]
kind = "exec"
command = ["$work/monitor.sh"]

[[sink]]
kind = "tmux"
alert = "never"
TOML

tmux -L bench -f /dev/null new-session -d -s bench "sleep infinity"
tmux -L bench set-option -g status-right '#{@lifeline}'
"$bin" daemon 2>"$work/daemon.log" &
daemon=$!
echo '{"state":"online","interface":"eth0"}' > "$work/fifo"
for _ in $(seq 500); do
  "$bin" status >/dev/null 2>&1 && break
  sleep 0.01
done
"$bin" status --format '{icon} {state}' >/dev/null || { echo "daemon not online:"; cat "$work/daemon.log"; exit 1; }

echo "-- lifeline status --format '{icon} {state}' (daemon running, $(stat -c %s "$bin") byte static binary)"
hyperfine -N --warmup 50 --runs 1000 --style basic --export-json "$work/status.json" \
  "$bin status --format '{icon} {state}'" 2>&1 | grep -E "Time|Range"
python3 - "$work/status.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
ms = lambda s: s * 1000
print(f"status: mean {ms(r['mean']):.2f} ms, median {ms(r['median']):.2f} ms, min {ms(r['min']):.2f} ms (goal <= 2 ms mean)")
PY

echo "-- publication -> tmux option @lifeline changed"
python3 - "$work" "$debounce_ms" <<'PY'
import json, os, subprocess, sys, time
work, debounce_ms = sys.argv[1], int(sys.argv[2])
state_file = os.path.join(os.environ["XDG_RUNTIME_DIR"], "lifeline", "state.json")
def option():
    return subprocess.run(["tmux", "-L", "bench", "show-options", "-gv", "@lifeline"],
                          capture_output=True, text=True).stdout
def state():
    try:
        with open(state_file) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
samples = []
for n in range(30):
    target = "offline" if n % 2 == 0 else "online"
    icon = "○ offline" if target == "offline" else "● online"
    with open(os.path.join(work, "fifo"), "w") as f:
        f.write(json.dumps({"state": target, "interface": "eth0"}) + "\n")
    deadline = time.time() + 5
    while icon not in option():  # one tmux client per poll: about 2 ms resolution
        if time.time() > deadline:
            sys.exit(f"timed out waiting for {target}")
    seen = time.time_ns() // 1000
    s = state()
    if s.get("state") != target:
        continue
    published = s["since"] + debounce_ms * 1000  # the bus publishes once the state held for the window
    samples.append((seen - published) / 1000)
samples.sort()
pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print(f"push: n={len(samples)} median {pick(0.5):.1f} ms, p90 {pick(0.9):.1f} ms, max {samples[-1]:.1f} ms (goal <= 20 ms)")
PY
