#!/usr/bin/env python3
"""A script in a loop on a real terminal, and Ctrl-C pressed while it runs.

  pty_loop.py PROGRAM ARG...

bash runs, on a new pseudo-terminal (its own session, the terminal's
foreground), the loop

  for i in 1 2 3; do PROGRAM ARG...; echo "rc=$? after $i"; done; echo loop-finished

Once a `sleep` of that session runs (the command of the first round has
started), Ctrl-C is typed on the terminal: the line discipline sends SIGINT
to the foreground process group, as it does for a user. Prints one JSON line:
how bash ended (`signal` or `exit`) and what the terminal showed.
"""
import json
import os
import pty
import shlex
import sys
import time


def sleeps_in_session(sid):
    """Pids of `sleep` processes in session `sid`."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat[stat.rindex(')') + 2:].split()
        # fields: state ppid pgrp session ...
        if name == 'sleep' and int(fields[3]) == sid:
            found.append(int(entry))
    return found


def main():
    command = ' '.join(shlex.quote(a) for a in sys.argv[1:])
    loop = f'for i in 1 2 3; do {command}; echo "rc=$? after $i"; done; echo loop-finished'
    pid, master = pty.fork()
    if pid == 0:
        os.execvp('bash', ['bash', '--norc', '--noprofile', '-c', loop])
    output = b''
    deadline = time.monotonic() + 20
    # The barrier: the first round's sleep runs (bounded poll).
    while not sleeps_in_session(pid):
        if time.monotonic() > deadline:
            print(json.dumps({'error': 'no sleep started', 'output': output.decode(errors='replace')}))
            os.kill(pid, 9)
            return
        time.sleep(0.01)
    os.write(master, b'\x03')
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    result = {'output': output.decode(errors='replace')}
    if os.WIFSIGNALED(status):
        result['signal'] = os.WTERMSIG(status)
    else:
        result['exit'] = os.WEXITSTATUS(status)
    print(json.dumps(result))


main()
