#!/usr/bin/env bash
# Prints, from the output of a failed `swift test` (the file LOG), each failed
# test once with its first issue: CI shows only the end of the output, where a
# failed test's name would otherwise have scrolled away.
#   swift-testing: "✘ Test NAME recorded an issue at FILE:LINE:COL: WHAT" and,
#                  when WHAT is only "Issue recorded", the "↳ …" line that says it;
#   XCTest:        "FILE:LINE: error: CLASS.TEST : WHAT".
# Then the run's own verdict lines (the summary, a crash, processes left behind).
set -u
log=${1:?usage: test-summary.sh LOG}
echo
echo "== failed tests, first issue of each (the whole output: $log)"
sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '
  function first(key, line) { if (!(key in seen)) { seen[key] = 1; print line; found = 1; return 1 } return 0 }
  pending { pending = 0; if (/^↳ /) print "  " $0 }
  /^✘ Test .* recorded an issue/ {
    key = $0; sub(/^✘ Test /, "", key); sub(/ recorded an issue.*/, "", key)
    if (first(key, $0) && / Issue recorded$/) pending = 1
    next
  }
  / error: [^ ]+ : / {
    key = $0; sub(/.* error: /, "", key); sub(/ : .*/, "", key)
    first(key, $0)
    next
  }
  /^✘ Test run with / || /^error: / || /^the tests left these processes running:/ { verdict[++n] = $0; left = /^the tests left/; next }
  left && /^[0-9]+ / { verdict[++n] = $0; next }
  { left = 0 }
  END {
    if (!found) print "(no failed test named: the run stopped before, or crashed)"
    for (i = 1; i <= n; i++) print verdict[i]
  }'
