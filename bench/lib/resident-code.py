#!/usr/bin/env python3
"""Which of a running program's code is resident, and whose code it is.

    resident-code.py PID [SYMBOLS_OUT]

Reads /proc/PID/pagemap for the executable's code mappings (the "present" bit
of each page; root sees it for any process), matches every resident page to the
functions `nm -n` places on it, and prints the resident kB per origin: the Swift
standard library, the Swift runtime (C++), the C++ library, and each Swift module
by its mangled name. With SYMBOLS_OUT it also writes the names of the functions
on resident pages, in address order, once each (what scripts/hot-code-order.sh
turns into the daemon's link order).
"""
import bisect
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = 4096


def code_mappings(pid, exe):
    """(start, end) of each executable mapping of EXE, and the load address."""
    spans, base = [], None
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or fields[5] != exe:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if int(fields[2], 16) == 0:  # the first segment: virtual address 0 of a PIE
                base = start if base is None else min(base, start)
            if "x" in fields[1]:
                spans.append((start, end))
    if base is None:
        sys.exit(f"resident-code: no mapping of {exe} at offset 0 in /proc/{pid}/maps")
    return spans, base


def resident_pages(pid, spans, base):
    """Link-time addresses of the resident pages of SPANS."""
    present = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end in spans:
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for i in range(len(entries) // 8):
                (entry,) = struct.unpack_from("<Q", entries, i * 8)
                if entry >> 63:
                    present.append(start + i * PAGE - base)
    return present


def functions(exe):
    """(address, name) of every defined function, by address."""
    listing = subprocess.run(["nm", "-n", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    result = []
    for line in listing.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[1] in "tTwW":
            result.append((int(fields[0], 16), fields[2]))
    return result


def origin(name):
    """Whose code a symbol is, from its (mangled) name."""
    if name.startswith(("$ss", "$sS")):
        return "Swift standard library"
    if name.startswith(("swift_", "_swift")) or "swift::" in name or re.match(r"_ZN?K?\d*(5swift|7__swift)", name):
        return "Swift runtime"
    if name.startswith(("_ZNSt", "_ZSt", "_ZNKSt", "__cxa", "_ZN9__gnu", "_ZN10__cxxabi")):
        return "C++ library"
    if name.startswith(("dispatch_", "_dispatch")):
        return "libdispatch"
    module = re.match(r"\$s(\d+)", name)
    if module:
        length = int(module.group(1))
        return name[module.end():module.end() + length]
    return "other (C, static functions)"


def main():
    pid = int(sys.argv[1])
    exe = os.readlink(f"/proc/{pid}/exe")
    spans, base = code_mappings(pid, exe)
    present = resident_pages(pid, spans, base)
    symbols = functions(exe)
    addresses = [address for address, _ in symbols]
    per_origin = collections.Counter()
    touched = []
    for page in present:
        # The function running into the page, then every one that starts on it.
        i = max(bisect.bisect_right(addresses, page) - 1, 0)
        per_origin[origin(symbols[i][1])] += 1
        while i < len(symbols) and symbols[i][0] < page + PAGE:
            touched.append(symbols[i][1])
            i += 1
    print(f"{len(present) * PAGE // 1024} kB of code resident")
    for name, pages in per_origin.most_common(25):
        print(f"{pages * PAGE // 1024:7d} kB  {name}")
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as out:
            out.writelines(name + "\n" for name in dict.fromkeys(touched))


main()
