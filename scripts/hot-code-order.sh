#!/usr/bin/env bash
# Writes Sources/lifeline-daemon/link/hot-code.order: the functions `lifeline daemon`
# runs from its start to an idle online state with the embedded defaults, which
# the release link of lifeline-daemon places first and together (lld's
# --symbol-ordering-file, the Makefile's DAEMON_LINK).
#
# Why: a page fault on code maps up to 16 neighbouring pages that are in the page
# cache (the kernel's fault-around, 64 kB), so code that runs scattered over the
# 12 MB text keeps most of it resident. Packed together, the same code keeps
# about 2 MB less resident (bench/memory.sh measures it).
#
# How: lifeline-daemon is linked once more with every function on a page of its
# own (a linker script aligning each input section to 4 kB), copied to an ext4
# image on a loop device whose read-ahead is 0, so a fault reads and maps only the
# page it needs; bench/memory.sh runs it in its lab; the functions on its resident
# pages, in address order, are the list. Rerun after large changes to the code
# that runs at start or while idle; a stale list only packs less well (names that
# no longer exist are skipped).
#
# Needs root, losetup, mkfs.ext4, and what bench/memory.sh needs. A few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=Sources/lifeline-daemon/link/hot-code.order
[ "$(id -u)" = 0 ] || { echo "hot-code-order: needs root (a loop device, network namespaces)" >&2; exit 1; }
make -s release

work=$(mktemp -d)
loop=
cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    [ -n "$loop" ] && losetup -d "$loop"
    rm -rf "$work"
}
trap cleanup EXIT

# The link command SwiftPM ran for lifeline-daemon, from its build manifest.
python3 - "$work/link.json" <<'PY'
import json, re, sys
manifest = open(".build/release.yaml").read()
key = manifest.find('"C.lifeline-daemon-')
args = re.search(r"\n\s+args: (\[.*\])\n", manifest[key:]) if key >= 0 else None
if not args:
    sys.exit("hot-code-order: no link command for lifeline-daemon in .build/release.yaml")
json.dump(json.loads(args.group(1)), open(sys.argv[1], "w"))
PY

truncate -s 1G "$work/image"
mkfs.ext4 -q -F "$work/image"
loop=$(losetup --show -f "$work/image")
echo 0 > "/sys/block/$(basename "$loop")/queue/read_ahead_kb"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
cp .build/release/lifeline .build/release/lifeline-cli "$work/mnt/"

echo 'SECTIONS { .text : SUBALIGN(4096) { *(.text .text.*) } } INSERT AFTER .init;' > "$work/page-per-function.ld"
python3 - "$work/link.json" "$work/mnt/lifeline-daemon" "$work/page-per-function.ld" <<'PY'
import json, subprocess, sys
args = json.load(open(sys.argv[1]))
args[args.index("-o") + 1] = sys.argv[2]
subprocess.run(args + ["-Xlinker", "-T", "-Xlinker", sys.argv[3], "-Xlinker", "-Map=" + sys.argv[2] + ".map"], check=True)
PY

MEMORY_CODE=1 MEMORY_CODE_SYMBOLS="$work/touched" MEMORY_WARMUP="${MEMORY_WARMUP:-35}" MEMORY_TOP=5 \
    LIFELINE_BIN="$work/mnt/lifeline" bash bench/memory.sh
# lld moves whole input sections: one name per section is enough (the link map
# lists each section's symbols; a name it does not list is kept).
python3 - "$work/touched" "$work/mnt/lifeline-daemon.map" "$out" <<'PY'
import re, sys
touched, link_map, out = sys.argv[1:4]
section_of, section = {}, None
for line in open(link_map):
    fields = line.split(None, 4)
    if len(fields) == 5 and re.fullmatch(r"[0-9a-f]+", fields[0]):
        name = fields[4].strip()
        if ":(" in name:
            section = name
        elif section:
            section_of[name] = section
names, seen = [], set()
for name in open(touched).read().split():
    section = section_of.get(name, name)
    if section not in seen:
        seen.add(section)
        names.append(name)
with open(out, "w") as f:
    f.write("# The functions lifeline-daemon runs from its start to an idle online state, linked first\n")
    f.write(f"# and together: written by scripts/hot-code-order.sh (why and how: there). {len(names)} names.\n")
    f.writelines(name + "\n" for name in names)
PY
# SwiftPM does not know the list is an input of the link: make it link again.
touch Sources/lifeline-daemon/main.swift
echo "hot-code-order: wrote $out; the next release build links with it"
