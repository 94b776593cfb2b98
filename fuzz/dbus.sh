#!/usr/bin/env bash
# Fuzzes the reading of D-Bus messages (what another user can send to any of
# the daemon's connections) with libFuzzer: libdbus's own demarshalling, the
# header checks every handler makes first, and argument reading within its
# bounds. fuzz/DBusFuzz.swift says what is checked besides not crashing.
#   fuzz/dbus.sh [SECONDS]     (default 60)
# Builds .build/fuzz/dbus-fuzz from LifelineDBus's message sources plus
# fuzz/DBusFuzz.swift with -sanitize=fuzzer,address, seeds a corpus
# with the signals the daemon follows (python3-gi), and runs for SECONDS.
# Crashes are written to .build/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out/dbus-corpus" "$out/crashes"

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name DBusFuzz -package-name lifeline \
    -I Sources/CDBus $(pkg-config --cflags-only-I dbus-1 | sed 's/-I/-Xcc -I/g') \
    Sources/LifelineDBus/BusMessage.swift Sources/LifelineDBus/BusValue.swift Sources/LifelineDBus/BusError.swift \
    Sources/LifelineDBus/ArgumentBounds.swift fuzz/DBusFuzz.swift \
    -o "$out/dbus-fuzz" 2> >(grep -v "Cannot export local symbol" >&2)

# Seeds: the signals and replies the daemon reads, in their wire form.
/usr/bin/python3 - "$out/dbus-corpus" <<'PY'
import os, sys
from gi.repository import Gio, GLib
d = sys.argv[1]
def signal(path, iface, member, body):
    m = Gio.DBusMessage.new_signal(path, iface, member)
    m.set_sender(":1.7")
    m.set_serial(7)  # libdbus refuses a message numbered 0
    m.set_body(body)
    return m.to_blob(Gio.DBusCapabilityFlags.NONE)
seeds = {
    "nm-properties": signal("/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties", "PropertiesChanged",
                            GLib.Variant("(sa{sv}as)", ("org.freedesktop.NetworkManager",
                                         {"Connectivity": GLib.Variant("u", 2), "Metered": GLib.Variant("u", 1)}, []))),
    "sleep": signal("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep", GLib.Variant("(b)", (True,))),
    "owner": signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                    GLib.Variant("(sss)", ("org.freedesktop.login1", ":1.2", ":1.3"))),
    "state": signal("/org/lifeline/Lifeline1", "org.lifeline.Lifeline1", "StateChanged",
                    GLib.Variant("(ssa{sv})", ("online", "offline", {"sequence": GLib.Variant("t", 3),
                                 "families": GLib.Variant("a(ss)", [("ipv4", "online")])}))),
    "nested": signal("/x", "org.example.I", "Deep", GLib.Variant("(v)", (GLib.Variant("v", GLib.Variant("av", [GLib.Variant("ay", b"abc")])),))),
}
for name, blob in seeds.items():
    open(os.path.join(d, "seed-" + name), "wb").write(bytes(blob))
PY

echo "fuzzing for ${seconds}s: $out/dbus-fuzz (crashes go to $out/crashes/)"
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=fuzz/lsan.supp "$out/dbus-fuzz" -max_total_time="$seconds" \
    -max_len=8192 -timeout=10 -print_final_stats=1 -artifact_prefix="$out/crashes/" "$out/dbus-corpus"
