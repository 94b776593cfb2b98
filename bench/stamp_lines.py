#!/usr/bin/env python3
"""Prints every line appended to FILE, prefixed with the wall clock (µs) it appeared.

usage: stamp_lines.py FILE

For "the moment the event appears in the daemon's log": woken by inotify on the
file's folder (no polling interval to add to the measurement), so a line is
stamped within a scheduling delay of its write. The file may not exist yet.
"""
import ctypes
import os
import struct
import sys
import time

IN_MODIFY, IN_CREATE, IN_MOVED_TO = 0x2, 0x100, 0x80

path = sys.argv[1]
folder = os.path.dirname(path) or "."
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0 or libc.inotify_add_watch(fd, folder.encode(), IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0:
    sys.exit(f"stamp_lines: cannot watch {folder}: {os.strerror(ctypes.get_errno())}")

offset = 0
pending = b""


def read_new():
    global offset, pending
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return
    now = time.time_ns() // 1000
    offset += len(data)
    *lines, pending = (pending + data).split(b"\n")
    for line in lines:
        sys.stdout.write(f"{now} {line.decode(errors='replace')}\n")
    sys.stdout.flush()


read_new()
while True:
    events = os.read(fd, 4096)
    while events:
        _, _, _, length = struct.unpack_from("iIII", events)
        events = events[16 + length:]
    read_new()
