#!/usr/bin/python3
"""A StatusNotifierWatcher and a tray host's calls, in Gio, for the tray tests.

  sni_watcher.py watch LOG [--hang]   own org.kde.StatusNotifierWatcher on the session
                                      bus; write one JSON line per event to LOG:
                                      ready, registered, and every signal of a registered
                                      item with the item's properties read after it.
                                      --hang: stop (SIGSTOP) on the first registration,
                                      before answering it, as a hung host would.
  sni_watcher.py layout NAME PATH     print the dbusmenu layout at NAME PATH as JSON (after
                                      AboutToShow for each submenu, as a host opening it)
  sni_watcher.py click NAME PATH LABEL   send Event(id, "clicked") to the item with LABEL
  sni_watcher.py activate NAME        call Activate(0, 0) on NAME's /StatusNotifierItem
  sni_watcher.py props NAME           print the item's properties as JSON
"""
import json
import os
import signal
import sys

from gi.repository import Gio, GLib

WATCHER = "org.kde.StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"

XML = """
<node>
  <interface name="org.kde.StatusNotifierWatcher">
    <method name="RegisterStatusNotifierItem"><arg name="service" type="s" direction="in"/></method>
    <method name="RegisterStatusNotifierHost"><arg name="service" type="s" direction="in"/></method>
    <property name="RegisteredStatusNotifierItems" type="as" access="read"/>
    <property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
    <property name="ProtocolVersion" type="i" access="read"/>
    <signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
  </interface>
</node>
"""


def bus():
    return Gio.bus_get_sync(Gio.BusType.SESSION, None)


def props(connection, name, path="/StatusNotifierItem"):
    reply = connection.call_sync(name, path, "org.freedesktop.DBus.Properties", "GetAll",
                                 GLib.Variant("(s)", (ITEM,)), None, Gio.DBusCallFlags.NONE, 5000, None)
    return reply.unpack()[0]


def watch(log_path, hang):
    log = open(log_path, "a", buffering=1)
    connection = bus()
    items = []

    def write(**fields):
        log.write(json.dumps(fields) + "\n")

    def on_signal(conn, sender, path, interface, member, parameters):
        try:
            values = props(conn, sender, path)
        except GLib.Error as e:
            values = {"error": str(e)}
        write(event="signal", member=member, args=list(parameters.unpack()), sender=sender, props=values)

    def method_call(conn, sender, path, interface, method, parameters, invocation):
        if method == "RegisterStatusNotifierItem":
            service = parameters.unpack()[0]
            item_path = service if service.startswith("/") else "/StatusNotifierItem"
            write(event="registered", service=service, sender=sender, path=item_path)
            items.append(sender + item_path)
            conn.signal_subscribe(sender, ITEM, None, item_path, None, Gio.DBusSignalFlags.NONE, on_signal)
            if hang:
                # Subscribed, so the bus keeps queueing the item's signals for us.
                os.kill(os.getpid(), signal.SIGSTOP)
            conn.emit_signal(None, "/StatusNotifierWatcher", WATCHER, "StatusNotifierItemRegistered",
                             GLib.Variant("(s)", (sender + item_path,)))
        invocation.return_value(None)

    def get_property(conn, sender, path, interface, name):
        if name == "RegisteredStatusNotifierItems":
            return GLib.Variant("as", items)
        if name == "IsStatusNotifierHostRegistered":
            return GLib.Variant("b", True)
        return GLib.Variant("i", 0)

    info = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]
    connection.register_object("/StatusNotifierWatcher", info, method_call, get_property, None)
    Gio.bus_own_name_on_connection(connection, WATCHER, Gio.BusNameOwnerFlags.NONE,
                                   lambda *a: write(event="ready"), lambda *a: write(event="lost"))
    GLib.MainLoop().run()


def layout(connection, name, path):
    """The menu as a host shows it: the host says it opens each submenu
    (AboutToShow), as Plasma and libdbusmenu-gtk do, then reads the layout."""
    def read():
        reply = connection.call_sync(name, path, MENU, "GetLayout", GLib.Variant("(iias)", (0, -1, [])),
                                     None, Gio.DBusCallFlags.NONE, 5000, None)
        return node(reply.unpack()[1])

    def node(value):
        ident, properties, children = value
        return {"id": ident, "label": properties.get("label", ""), "enabled": properties.get("enabled", True),
                "visible": properties.get("visible", True),
                "submenu": properties.get("children-display", "") == "submenu",
                "children": [node(c) for c in children]}

    def submenus(tree):
        for child in tree["children"]:
            if child["submenu"]:
                yield child["id"]
            yield from submenus(child)

    for ident in list(submenus(read())):
        connection.call_sync(name, path, MENU, "AboutToShow", GLib.Variant("(i)", (ident,)),
                             None, Gio.DBusCallFlags.NONE, 5000, None)
    return read()


def find(tree, label):
    if tree["label"] == label:
        return tree["id"]
    for child in tree["children"]:
        found = find(child, label)
        if found is not None:
            return found
    return None


def main():
    command = sys.argv[1]
    if command == "watch":
        watch(sys.argv[2], "--hang" in sys.argv[3:])
        return
    connection = bus()
    if command == "layout":
        print(json.dumps(layout(connection, sys.argv[2], sys.argv[3])))
    elif command == "click":
        ident = find(layout(connection, sys.argv[2], sys.argv[3]), sys.argv[4])
        if ident is None:
            sys.exit("no item labelled " + sys.argv[4])
        connection.call_sync(sys.argv[2], sys.argv[3], MENU, "Event",
                             GLib.Variant("(isvu)", (ident, "clicked", GLib.Variant("i", 0), 0)),
                             None, Gio.DBusCallFlags.NONE, 5000, None)
    elif command == "activate":
        connection.call_sync(sys.argv[2], "/StatusNotifierItem", ITEM, "Activate", GLib.Variant("(ii)", (0, 0)),
                             None, Gio.DBusCallFlags.NONE, 5000, None)
    elif command == "props":
        print(json.dumps(props(connection, sys.argv[2])))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
