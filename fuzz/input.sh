#!/usr/bin/env bash
# Fuzzes the readers of other programs' text with libFuzzer: an exec monitor's
# output lines and the event JSON of the log and the state file (what
# `lifeline status` and `lifeline history` read back). fuzz/InputFuzz says what
# each input is checked for besides not crashing.
#   fuzz/input.sh [SECONDS]     (default 60)
# Builds lifeline-fuzz-input with -sanitize=fuzzer,address into .build/fuzz-swiftpm
# (shared with fuzz/config.sh: same flags, so the dependencies are built once),
# starts from the seeds in fuzz/corpus/input/ and runs for SECONDS. Crashes are
# written to .build/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out/input-corpus" "$out/crashes"

# SwiftPM's --sanitize=fuzzer only links libFuzzer; -Xswiftc adds the coverage
# instrumentation the fuzzer steers by.
swift build -c release --product lifeline-fuzz-input --scratch-path .build/fuzz-swiftpm \
    --sanitize=address --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    2> >(grep -v "Cannot export local symbol" >&2)
binary=.build/fuzz-swiftpm/release/lifeline-fuzz-input

echo "fuzzing for ${seconds}s: $binary (crashes go to $out/crashes/)"
# New inputs go to the first folder; the committed seeds stay as they are.
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=fuzz/lsan.supp "$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
    -dict=fuzz/input.dict -artifact_prefix="$out/crashes/" "$out/input-corpus" fuzz/corpus/input
