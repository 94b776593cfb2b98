#!/usr/bin/python3
"""Prints what GLib's GNetworkMonitor tells an application, one line per signal.

This is what a GNOME application sees through `g_network_monitor_get_default()`:
run it in the network namespace to watch (`ip netns exec NS bench/gnetworkmonitor.py`).
Without NetworkManager on the system bus (and outside a sandbox) GLib picks its
netlink backend, which follows the kernel's routing table; with Lifeline's GIO
module on GIO's module path and the daemon running, it picks Lifeline's.

Output, flushed per line:
  backend NAME available 0|1 connectivity N     once, at start
  T network-changed available 0|1 connectivity N    per `network-changed` signal
  T notify connectivity N                        per `notify::connectivity`

T is the wall clock in microseconds when the signal reached this process;
`available` is the signal's own argument; connectivity is GNetworkConnectivity
read at that moment (1 local, 2 limited, 3 portal, 4 full).

Needs Debian's python3-gi and gir1.2-glib-2.0 (run by /usr/bin/python3, which
is the interpreter those packages install for).
"""
import time

from gi.repository import Gio, GLib


def main():
    monitor = Gio.NetworkMonitor.get_default()
    print(f"backend {type(monitor).__gtype__.name} available {int(monitor.get_network_available())} "
          f"connectivity {int(monitor.get_connectivity())}", flush=True)

    def changed(source, available):
        now = time.time_ns() // 1000
        print(f"{now} network-changed available {int(available)} connectivity {int(source.get_connectivity())}",
              flush=True)

    monitor.connect("network-changed", changed)
    monitor.connect("notify::connectivity", lambda source, spec: print(
        f"{time.time_ns() // 1000} notify connectivity {int(source.get_connectivity())}", flush=True))
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
