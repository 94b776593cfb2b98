#!/usr/bin/env bash
# Runs a command (the test suite) and fails if it leaves processes behind.
# Every process the command starts, directly or not, inherits a marker in its
# environment; once the command has ended, no process may still carry it.
# The desktops under test run as an unprivileged user with a cleared
# environment, so they carry no marker: a process of such a user (`nobody`, or
# a user created during the run) that started after the run began and is still
# alive at its end is left behind too. What those users ran before the run
# began (the machine's own daemons) is not counted.
# Files count too: an entry named lifeline-* in the temporary folder that the
# run made and left (a fixture's folder, a bus socket) is named as well, and so
# is an X server's lock file (/tmp/.X<display>-lock, always in /tmp): an X
# server killed rather than stopped leaves it there for good.
set -u
marker="lifeline-test-run-$$-$RANDOM"
nobody=$(id -u nobody 2>/dev/null || echo 65534)
declare -A known_users=()
while IFS=: read -r _ _ uid _; do known_users[$uid]=1; done < <(getent passwd)
# A process's start, in clock ticks since boot (the 22nd field of its stat).
started() {
  local stat
  read -r stat < "/proc/$1/stat" || return 1
  set -- ${stat##*) }
  echo "${20}"
}
run_began=$(started $$)
temporary=${TMPDIR:-/tmp}
watched_files() {
  local file
  for file in "$temporary"/lifeline-* /tmp/.X*-lock; do
    [[ -e $file || -L $file ]] && echo "$file"
  done
}
declare -A known_files=()
while read -r file; do known_files[$file]=1; done < <(watched_files)
export LIFELINE_TEST_RUN="$marker"
"$@"
status=$?
unset LIFELINE_TEST_RUN  # the checks below must not carry it themselves
# Started during the run, alive (not a zombie), and run by `nobody` or by a user
# the run created.
desktop_user_process() {
  local key value uid="" stat
  { while read -r key value _; do
      [[ $key == Uid: ]] && { uid=$value; break; }
    done < "/proc/$1/status"; } 2>/dev/null
  [[ -n $uid ]] || return 1
  [[ $uid == "$nobody" || -z ${known_users[$uid]:-} ]] || return 1
  { read -r stat < "/proc/$1/stat"; } 2>/dev/null || return 1
  set -- ${stat##*) }
  [[ $1 != Z && ${20} -ge $run_began ]]
}
leftovers() {
  local file pid
  {
    for file in $(grep -lxzF "LIFELINE_TEST_RUN=$marker" /proc/[0-9]*/environ 2>/dev/null); do
      pid=${file#/proc/}; echo "${pid%/environ}"
    done
    for file in /proc/[0-9]*/status; do
      pid=${file#/proc/}; pid=${pid%/status}
      desktop_user_process "$pid" && echo "$pid"
    done
  } | sort -un | while read -r pid; do
    echo "$pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)"
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
left_files=()
while read -r file; do
  [[ -z ${known_files[$file]:-} ]] && left_files+=("$file")
done < <(watched_files)
if (( ${#left_files[@]} )); then
  echo "the tests left these files behind:" >&2
  printf '%s\n' "${left_files[@]}" >&2
  exit 1
fi
exit $status
