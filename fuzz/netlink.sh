#!/usr/bin/env bash
# Fuzzes the rtnetlink parser (and the route table and gateway pick it feeds) with libFuzzer.
#   fuzz/netlink.sh [SECONDS]     (default 60)
# Builds .build/fuzz/netlink-fuzz from the parser sources plus fuzz/NetlinkFuzz.swift
# (and the two core files the route table uses)
# with -sanitize=fuzzer,address, seeds a corpus with real dumps when `ip` can
# read them, and runs for SECONDS. Crashes are written to .build/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out/corpus" "$out/crashes"

# The route table names the missing layer with LifelineCore's `Diagnosis`: the
# two plain files it needs become a small LifelineCore module of their own (the
# whole core would bring swift-log with it).
mkdir -p "$out/core"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name LifelineCore \
    -emit-module -emit-module-path "$out/core/LifelineCore.swiftmodule" \
    -emit-library -static -o "$out/core/libLifelineCore.a" \
    Sources/LifelineCore/State.swift Sources/LifelineCore/Diagnosis.swift
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name NetlinkFuzz -package-name lifeline \
    -I Sources/CNetlink -I "$out/core" -L "$out/core" -lLifelineCore \
    Sources/LifelineNet/Netlink/NetlinkParser.swift Sources/LifelineNet/Netlink/RouteTable.swift \
    Sources/LifelineNet/Netlink/NeighbourMessage.swift Sources/LifelineNet/Netlink/DefaultGateway.swift \
    fuzz/NetlinkFuzz.swift -o "$out/netlink-fuzz" 2> >(grep -v "Cannot export local symbol" >&2)

# Seeds: hand-made messages of each type (see Tests/PluginTests/NetlinkWire.swift).
python3 - "$out/corpus" <<'PY'
import struct, sys, os
d = sys.argv[1]
def attr(t, p):
    b = struct.pack("=HH", 4 + len(p), t) + p
    return b + b"\0" * ((4 - len(b) % 4) % 4)
def msg(t, body, flags=0):
    b = struct.pack("=IHHII", 16 + len(body), t, flags, 0, 0) + body
    return b + b"\0" * ((4 - len(b) % 4) % 4)
link = msg(16, struct.pack("=BBHiII", 0, 0, 1, 2, 0x10041, 0) + attr(3, b"v0\0") + attr(18, attr(1, b"veth\0")))
addr = msg(20, struct.pack("=BBBBI", 2, 24, 0, 0, 2) + attr(2, bytes([10, 77, 0, 2])) + attr(1, bytes([10, 77, 0, 2])))
route = msg(24, struct.pack("=BBBBBBBBI", 2, 0, 0, 0, 254, 3, 0, 1, 0) + attr(6, struct.pack("=I", 100)) + attr(4, struct.pack("=i", 2)) + attr(5, bytes([10, 77, 0, 1])))
hop = lambda i, gw: (lambda a: struct.pack("=HBBi", 8 + len(a), 0, 0, i) + a)(attr(5, gw))
mp = msg(24, struct.pack("=BBBBBBBBI", 2, 0, 0, 0, 254, 3, 0, 1, 0) + attr(9, hop(2, bytes([10, 77, 0, 1])) + hop(3, bytes([10, 78, 0, 1]))), 0x100)
v6 = msg(24, struct.pack("=BBBBBBBBI", 10, 0, 0, 0, 254, 3, 0, 1, 0) + attr(15, struct.pack("=I", 254)) + attr(4, struct.pack("=i", 2)) + attr(5, bytes([0xfd, 0x77] + [0] * 13 + [1])))
done = msg(3, struct.pack("=i", 0))
# Neighbour entries (ndmsg: family, ifindex, state) for the gateways above: IPv4 INCOMPLETE, IPv6 REACHABLE.
neigh = msg(28, struct.pack("=BBHiHBB", 2, 0, 0, 2, 0x01, 0, 1) + attr(1, bytes([10, 77, 0, 1])))
neigh6 = msg(28, struct.pack("=BBHiHBB", 10, 0, 0, 2, 0x02, 0, 1) + attr(1, bytes([0xfd, 0x77] + [0] * 13 + [1])) + attr(2, bytes([2, 0, 0, 0, 0, 1])))
for name, data in {"link": link, "addr": addr, "route": route, "multipath": mp, "v6": v6,
                   "all": link + addr + route + mp + v6 + done, "neigh": route + v6 + neigh + neigh6 + done, "down": link + route + msg(16, struct.pack("=BBHiII", 0, 0, 1, 2, 0, 0) + attr(3, b"v0\0"))}.items():
    open(os.path.join(d, "seed-" + name), "wb").write(data)
PY

echo "fuzzing for ${seconds}s: $out/netlink-fuzz (crashes go to $out/crashes/)"
"$out/netlink-fuzz" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/" "$out/corpus"
