#!/usr/bin/env bash
# Runs a command (the test suite) and fails if it leaves processes behind.
# Every process the command starts, directly or not, inherits a marker in its
# environment; once the command has ended, no process may still carry it.
set -u
marker="lifeline-test-run-$$-$RANDOM"
export LIFELINE_TEST_RUN="$marker"
"$@"
status=$?
unset LIFELINE_TEST_RUN  # the checks below must not carry it themselves
leftovers() {
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    if { tr '\0' '\n' < "$environ"; } 2>/dev/null | grep -qx "LIFELINE_TEST_RUN=$marker"; then
      echo "$pid $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-160)"
    fi
  done
}
# A process killed at the very end may take a moment to be reaped.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  left=$(leftovers)
  [[ -z $left ]] && break
  sleep 0.5
done
if [[ -n $left ]]; then
  echo "the tests left these processes running:" >&2
  echo "$left" >&2
  exit 1
fi
exit $status
