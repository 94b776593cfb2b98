#!/usr/bin/env bash
# Fuzzes the config loader with libFuzzer: the reader of the TOML child's answer,
# the value tree → typed config path of every plugin kind, the source locator and
# the `config show` round trip (fuzz/ConfigFuzz/ConfigFuzz.swift says why the TOML
# parser itself is not in it).
#   fuzz/config.sh [SECONDS]     (default 60)
# Builds lifeline-fuzz-config with -sanitize=fuzzer,address into .build/fuzz-swiftpm,
# starts from the seeds in fuzz/corpus/config/ (each is `lifeline config parse-toml
# < FILE.toml`), and runs for SECONDS. Crashes are written to .build/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out/config-corpus" "$out/crashes"

# SwiftPM's --sanitize=fuzzer only links libFuzzer; -Xswiftc adds the coverage
# instrumentation the fuzzer steers by.
swift build -c release --product lifeline-fuzz-config --scratch-path .build/fuzz-swiftpm \
    --sanitize=address --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    2> >(grep -v "Cannot export local symbol" >&2)
binary=.build/fuzz-swiftpm/release/lifeline-fuzz-config

echo "fuzzing for ${seconds}s: $binary (crashes go to $out/crashes/)"
# New inputs go to the first folder; the committed seeds stay as they are.
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=fuzz/lsan.supp "$binary" -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
    -dict=fuzz/config.dict -artifact_prefix="$out/crashes/" "$out/config-corpus" fuzz/corpus/config
