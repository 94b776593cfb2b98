#!/usr/bin/python3
"""Another program on a bus pretending to be the peers Lifeline believes (Gio).

  spoof_signals.py ADDRESS PID system    as NetworkManager, logind and the bus itself
  spoof_signals.py ADDRESS PID session   as the lifeline daemon and the bus itself
  spoof_signals.py ADDRESS PID big [N]   N (default 1) signals of 30 MiB each

Finds every connection of process PID (ListNames, GetConnectionUnixProcessID:
any user may ask), and sends each of them, from this one connection, unicast
signals that claim to come from someone else:

  system:  NetworkManager's PropertiesChanged (Connectivity = PORTAL);
           NameOwnerChanged saying NetworkManager left, then that this
           connection owns it, then PropertiesChanged again;
           NameOwnerChanged saying this connection owns org.freedesktop.login1,
           then logind's PrepareForSleep(true).
  session: the daemon's StateChanged (online) and JobsRequested (cancel, every
           job of its Jobs property); NameOwnerChanged saying the daemon left,
           then that this connection owns its name, then StateChanged again.

  big:     a stranger's noise (org.example.Stranger.Noise, one `ay`) and the
           same bytes in logind's and NetworkManager's signals' names, as
           another user can address them to any connection.

Prints each destination reached, one per line; exit status 1 when none.
"""
import sys

from gi.repository import Gio, GLib

BUS = "org.freedesktop.DBus"
NM = "org.freedesktop.NetworkManager"
LOGIN1 = "org.freedesktop.login1"
LIFELINE = "org.lifeline.Lifeline1"


def call(connection, member, args, destination=BUS, path="/org/freedesktop/DBus", interface=BUS):
    return connection.call_sync(destination, path, interface, member, args, None,
                                Gio.DBusCallFlags.NO_AUTO_START, 5000, None).unpack()


def owner(connection, name):
    try:
        return call(connection, "GetNameOwner", GLib.Variant("(s)", (name,)))[0]
    except GLib.Error:
        return ""


def connections_of(connection, pid):
    found = []
    for name in call(connection, "ListNames", None)[0]:
        if not name.startswith(":"):
            continue
        try:
            if call(connection, "GetConnectionUnixProcessID", GLib.Variant("(s)", (name,)))[0] == pid:
                found.append(name)
        except GLib.Error:
            pass
    return found


def name_owner_changed(connection, dest, name, old, new):
    connection.emit_signal(dest, "/org/freedesktop/DBus", BUS, "NameOwnerChanged", GLib.Variant("(sss)", (name, old, new)))


def system(connection, me, dest):
    portal = GLib.Variant("(sa{sv}as)", (NM, {"Connectivity": GLib.Variant("u", 2)}, []))
    nm = owner(connection, NM)
    connection.emit_signal(dest, "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties",
                           "PropertiesChanged", portal)
    name_owner_changed(connection, dest, NM, nm, "")
    name_owner_changed(connection, dest, NM, "", me)
    connection.emit_signal(dest, "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties",
                           "PropertiesChanged", portal)
    name_owner_changed(connection, dest, LOGIN1, owner(connection, LOGIN1), me)
    connection.emit_signal(dest, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
                           GLib.Variant("(b)", (True,)))


def session(connection, me, dest):
    daemon = owner(connection, LIFELINE)
    try:
        jobs = call(connection, "Get", GLib.Variant("(ss)", (LIFELINE, "Jobs")), destination=LIFELINE,
                    path="/org/lifeline/Lifeline1", interface="org.freedesktop.DBus.Properties")[0]
    except GLib.Error:
        jobs = []
    ids = [job[0] for job in jobs]
    online = GLib.Variant("(ssa{sv})", ("online", "offline", {
        "state": GLib.Variant("s", "online"), "previous": GLib.Variant("s", "offline"),
        "since": GLib.Variant("t", 1), "interface": GLib.Variant("s", "eth0"),
        "sequence": GLib.Variant("t", 1 << 40)}))

    def state_changed():
        connection.emit_signal(dest, "/org/lifeline/Lifeline1", LIFELINE, "StateChanged", online)

    state_changed()
    connection.emit_signal(dest, "/org/lifeline/Lifeline1", LIFELINE, "JobsRequested", GLib.Variant("(sas)", ("cancel", ids)))
    name_owner_changed(connection, dest, LIFELINE, daemon, "")
    name_owner_changed(connection, dest, LIFELINE, "", me)
    state_changed()


def big(connection, me, dest, count):
    # Straight from bytes: a tuple of 30 million Python ints would take minutes.
    noise = GLib.Variant.new_tuple(GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes.new(b"\0" * (30 << 20)), True))
    names = [("/x", "org.example.Stranger", "Noise"),
             ("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep"),
             ("/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties", "PropertiesChanged")]
    for i in range(count):
        path, interface, member = names[i % len(names)]
        connection.emit_signal(dest, path, interface, member, noise)
        connection.flush_sync(None)


def main():
    address, pid, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    me = connection.get_unique_name()
    targets = connections_of(connection, pid)
    for dest in targets:
        if scenario == "big":
            big(connection, me, dest, count)
        else:
            (system if scenario == "system" else session)(connection, me, dest)
        print(dest, flush=True)
    connection.flush_sync(None)
    sys.exit(0 if targets else 1)


if __name__ == "__main__":
    main()
