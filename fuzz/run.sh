#!/usr/bin/env bash
# Fuzzes one target with libFuzzer:
#   fuzz/run.sh TARGET [SECONDS]     (default 60)
# TARGET is netlink, dbus, config or input; fuzz/<Name>Fuzz/ says what its
# inputs are and what each is checked for besides not crashing.
# Builds lifeline-fuzz-TARGET with -sanitize=fuzzer,address into
# .build/fuzz-swiftpm (one scratch folder for all targets: same flags, so the
# libraries are built once), starts from the committed seeds in
# fuzz/corpus/TARGET/ (with fuzz/TARGET.dict when there is one) and runs for
# SECONDS. New inputs go to .build/fuzz/TARGET-corpus; crashes are written to
# .build/fuzz/crashes/, and `.build/debug/lifeline-fuzz-TARGET FILE` replays one.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/run.sh netlink|dbus|config|input [SECONDS]}
seconds=${2:-60}
[ -d "fuzz/corpus/$target" ] || { echo "fuzz/run.sh: no target '$target' (fuzz/corpus/$target is missing)" >&2; exit 2; }
out=.build/fuzz
mkdir -p "$out/$target-corpus" "$out/crashes"

# SwiftPM's --sanitize=fuzzer only links libFuzzer; -Xswiftc adds the coverage
# instrumentation the fuzzer steers by.
swift build -c release --product "lifeline-fuzz-$target" --scratch-path .build/fuzz-swiftpm \
    --sanitize=address --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    2> >(grep -v "Cannot export local symbol" >&2)
binary=.build/fuzz-swiftpm/release/lifeline-fuzz-$target

options=(-max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 -artifact_prefix="$out/crashes/")
[ -f "fuzz/$target.dict" ] && options+=(-dict="fuzz/$target.dict")
echo "fuzzing for ${seconds}s: $binary (crashes go to $out/crashes/)"
# New inputs go to the first folder; the committed seeds stay as they are.
# fuzz/lsan.supp names the leaks that are a library's, not ours.
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=fuzz/lsan.supp "$binary" "${options[@]}" \
    "$out/$target-corpus" "fuzz/corpus/$target"
