#!/usr/bin/env bash
# What the user's language costs `lifeline status` (the front binary, run every
# second by status bars): the same state file printed as a template (gettext is
# never set up), as the English sentence (set up, no catalog for the language)
# and as the Korean one (a catalog mapped and searched). BEFORE_BIN=path adds a
# binary built before translations, for the same three commands. `status` exits 1
# here (the state is limited): hyperfine -i counts those runs.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$PWD/.build/release/lifeline
[[ -x $bin ]] || { echo "build it first: make release" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine missing" >&2; exit 1; }
make --silent locale

work=$(mktemp -d /tmp/lifeline-bench-language.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR=$work/run LIFELINE_LOCALEDIR=$PWD/.build/locale
mkdir -p "$XDG_RUNTIME_DIR/lifeline"
# A state file as the daemon writes it, owned by this shell (its pid is alive).
printf '{"state":"limited","previous":"online","since":%s,"interface":"wlan0","kind":"wifi","reason":"DNS (10.0.0.1) did not answer for nmcheck.gnome.org within 5s","rtt_ms":-1,"metered":false,"sequence":3,"connection":"","diagnosis":"dns","families":{"ipv4":"limited"},"pid":%s,"muted_until":0}\n' \
  "$(($(date +%s) * 1000000 - 125000000))" "$$" > "$XDG_RUNTIME_DIR/lifeline/state.json"

# hyperfine runs each command itself (-N, no shell); the language comes from its environment.
measure() {
  local label=$1 command=$2; shift 2
  echo "-- $label: $* $command"
  env "$@" hyperfine -N -i --warmup 50 --runs 1000 --style basic "$command" 2>&1 | grep -E "Time|Range"
}

for b in "$bin" ${BEFORE_BIN:+"$BEFORE_BIN"}; do
  echo "== $b"
  env LC_ALL=C.UTF-8 LANGUAGE=ko "$b" status || true
  measure "template (no gettext)" "$b status --format '{icon} {state}'" LC_ALL=C.UTF-8 LANGUAGE=ko
  measure "English sentence" "$b status" -u LANGUAGE LC_ALL=C.UTF-8
  measure "Korean sentence" "$b status" LC_ALL=C.UTF-8 LANGUAGE=ko
done
