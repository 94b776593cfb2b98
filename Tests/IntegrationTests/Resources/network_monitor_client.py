#!/usr/bin/python3
"""What a GLib application sees through g_network_monitor_get_default().

usage: network_monitor_client.py watch
       network_monitor_client.py reach HOST PORT

watch: one line at start, then one per signal, flushed:
  T start TYPE GET_DEFAULT_MS AVAILABLE CONNECTIVITY METERED UNIQUE_NAME
  T changed AVAILABLE CONNECTIVITY METERED        per `network-changed`
  T notify PROPERTY AVAILABLE CONNECTIVITY METERED per `notify::` of the three
T is the wall clock in microseconds, GET_DEFAULT_MS how long
g_network_monitor_get_default() took, the values 0/1 and GNetworkConnectivity
(1 local, 2 limited, 3 portal, 4 full), read when the line is printed;
UNIQUE_NAME is this process's name on the session bus (GLib's shared connection).

reach: can_reach, then can_reach_async while a 10 ms timer runs on the main
loop; prints "sync OK|ERROR-CODE", "ticks N" (timer runs while the async call
was pending) and "async OK|ERROR-CODE".

Needs Debian's python3-gi (run by /usr/bin/python3).
"""
import sys
import time

from gi.repository import Gio, GLib


def now():
    return time.time_ns() // 1000


def values(monitor):
    return "%d %d %d" % (monitor.get_network_available(), int(monitor.get_connectivity()),
                         monitor.get_network_metered())


def watch():
    start = time.monotonic()
    monitor = Gio.NetworkMonitor.get_default()
    took = (time.monotonic() - start) * 1000
    try:
        unique = Gio.bus_get_sync(Gio.BusType.SESSION, None).get_unique_name()
    except GLib.Error:
        unique = "-"
    print(f"{now()} start {type(monitor).__gtype__.name} {took:.3f} {values(monitor)} {unique}", flush=True)
    monitor.connect("network-changed", lambda m, available: print(f"{now()} changed {values(m)}", flush=True))
    for name in ("network-available", "connectivity", "network-metered"):
        monitor.connect("notify::" + name, lambda m, spec: print(f"{now()} notify {spec.name} {values(m)}", flush=True))
    GLib.MainLoop().run()


def code(error):
    return Gio.IOErrorEnum(error.code).value_nick if error.domain == "g-io-error-quark" else error.domain


def reach(host, port):
    monitor = Gio.NetworkMonitor.get_default()
    address = Gio.NetworkAddress.new(host, int(port))
    try:
        print("sync", "OK" if monitor.can_reach(address, None) else "FALSE", flush=True)
    except GLib.Error as error:
        print("sync", code(error), flush=True)
    loop = GLib.MainLoop()
    ticks = [0]
    pending = [True]

    def tick():
        if pending[0]:
            ticks[0] += 1
        return pending[0]

    def done(source, result):
        pending[0] = False
        print("ticks", ticks[0], flush=True)
        try:
            print("async", "OK" if source.can_reach_finish(result) else "FALSE", flush=True)
        except GLib.Error as error:
            print("async", code(error), flush=True)
        loop.quit()

    GLib.timeout_add(10, tick)
    monitor.can_reach_async(address, None, done)
    loop.run()


if __name__ == "__main__":
    if sys.argv[1] == "watch":
        watch()
    else:
        reach(sys.argv[2], sys.argv[3])
