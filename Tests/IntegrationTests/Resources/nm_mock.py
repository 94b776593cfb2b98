#!/usr/bin/python3
"""Drives python-dbusmock's `networkmanager` template on the bus named by
DBUS_SYSTEM_BUS_ADDRESS (the tests' private stand-in for the system bus).

  nm_mock.py primary NAME TYPE IFACE METERED   add a device and make NAME the primary connection
  nm_mock.py state N                          NetworkManager State (20 disconnected, 70 connected global)
  nm_mock.py connectivity N                   Connectivity (1 none, 2 portal, 3 limited, 4 full)
  nm_mock.py metered N                        Metered (1 yes, 2 no)
  nm_mock.py checking on|off                  ConnectivityCheckEnabled
  nm_mock.py flap COUNT SECONDS               Connectivity LIMITED/FULL, COUNT changes spread over SECONDS
  nm_mock.py held-primary NAME TYPE IFACE METERED
                                              like primary, but the first GetAll of the new connection
                                              is answered only on `answer IFACE` (a NetworkManager that
                                              is slow to reply; the mock answers everything else meanwhile)
  nm_mock.py answer IFACE                     answers that held GetAll, with the properties of when it was asked
  nm_mock.py stalled-primary NAME TYPE IFACE METERED
                                              like primary, but no GetAll of the new connection is ever
                                              answered (a NetworkManager stuck on that object)
  nm_mock.py dhcp4 IFACE [NAME KIND VALUE]    a new lease for the connection of IFACE: its DHCP4Config's
                                              Options hold an address and NAME (KIND s: the string VALUE,
                                              u: the number VALUE, big: "https://" and VALUE letters);
                                              the first lease is given to the connection, later ones
                                              change the Options
"""
import sys
import time

import dbus

NM = 'org.freedesktop.NetworkManager'
MANAGER = '/org/freedesktop/NetworkManager'
MOCK = 'org.freedesktop.DBus.Mock'
TEST = 'org.lifeline.Test'

# Run inside the mock (python-dbusmock executes a method's code with `self` the
# object). The held GetAll replies through dbus-python's asynchronous callbacks,
# so the mock's loop keeps serving every other call while this one waits.
HOLD = '''
def held(obj, interface_name, answer, fail):
    obj.log(f'GetAll {obj.path} {interface_name} (held)')
    obj.held = (answer, dict(obj.props.get(interface_name, {})))
    del obj.methods[dbus.PROPERTIES_IFACE]['GetAll']
held = dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='s', out_signature='a{sv}',
                           async_callbacks=('answer', 'fail'))(held)
self.methods.setdefault(dbus.PROPERTIES_IFACE, {})['GetAll'] = ('s', 'a{sv}', None, held)
'''
STALL = '''
def stalled(obj, interface_name, answer, fail):
    obj.log(f'GetAll {obj.path} {interface_name} (stalled)')
    obj.stalled = getattr(obj, 'stalled', []) + [answer]
stalled = dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='s', out_signature='a{sv}',
                              async_callbacks=('answer', 'fail'))(stalled)
self.methods.setdefault(dbus.PROPERTIES_IFACE, {})['GetAll'] = ('s', 'a{sv}', None, stalled)
'''
ANSWER = '''
answer, props = self.held
del self.held
self.log(f'GetAll {self.path} answered')
answer(props)
'''

bus = dbus.SystemBus()
mock = dbus.Interface(bus.get_object(NM, MANAGER), MOCK)
props = dbus.Interface(bus.get_object(NM, MANAGER), 'org.freedesktop.DBus.Properties')


def manager_property(name, value):
    """Sets a manager property, adding it first when the template lacks it."""
    try:
        props.Get(NM, name)
    except dbus.exceptions.DBusException:
        mock.AddProperty(NM, name, value)
    mock.SetProperty(MANAGER, NM, name, value)


def active_path(iface):
    return '/org/freedesktop/NetworkManager/ActiveConnection/' + iface


def primary(name, conn_type, iface, metered, held=False, stalled=False):
    device = '/org/freedesktop/NetworkManager/Devices/' + iface
    mock.AddObject(device, NM + '.Device', {'Interface': iface, 'State': dbus.UInt32(100)}, [])
    active = active_path(iface)
    mock.AddObject(active, NM + '.Connection.Active', {
        'Id': name, 'Type': conn_type, 'Devices': dbus.Array([dbus.ObjectPath(device)], signature='o'),
        'State': dbus.UInt32(2), 'Default': True,
        'Dhcp4Config': dbus.ObjectPath('/'), 'Dhcp6Config': dbus.ObjectPath('/'),
    }, [])
    if held:
        test_call(active, 'HoldNextGetAll', HOLD)
    if stalled:
        test_call(active, 'StallEveryGetAll', STALL)
    manager_property('ConnectivityCheckEnabled', dbus.Boolean(True, variant_level=1))
    manager_property('Metered', dbus.UInt32(int(metered), variant_level=1))
    manager_property('PrimaryConnection', dbus.ObjectPath(active, variant_level=1))


def dhcp4(iface, *option):
    path = '/org/freedesktop/NetworkManager/DHCP4Config/' + iface
    options = {'ip_address': dbus.String('10.0.0.2')}
    if option:
        name, kind, value = option
        if kind == 'u':
            options[name] = dbus.UInt32(int(value))
        elif kind == 'big':
            options[name] = dbus.String('https://' + 'a' * int(value))
        else:
            options[name] = dbus.String(value)
    options = dbus.Dictionary(options, signature='sv', variant_level=1)
    try:
        mock.SetProperty(path, NM + '.DHCP4Config', 'Options', options)
    except dbus.exceptions.DBusException:  # the connection's first lease
        mock.AddObject(path, NM + '.DHCP4Config', {'Options': options}, [])
        mock.SetProperty(active_path(iface), NM + '.Connection.Active', 'Dhcp4Config',
                         dbus.ObjectPath(path, variant_level=1))


def test_call(path, method, code):
    """Adds `method` running `code` to the mock's object at `path`, and calls it."""
    obj = bus.get_object(NM, path)
    dbus.Interface(obj, MOCK).AddMethod(TEST, method, '', '', code)
    obj.get_dbus_method(method, TEST)()


def main(argv):
    command, args = argv[1], argv[2:]
    if command == 'primary':
        primary(*args)
    elif command == 'held-primary':
        primary(*args, held=True)
    elif command == 'stalled-primary':
        primary(*args, stalled=True)
    elif command == 'answer':
        test_call(active_path(args[0]), 'AnswerHeldGetAll', ANSWER)
    elif command == 'dhcp4':
        dhcp4(*args)
    elif command == 'state':
        mock.SetGlobalConnectionState(dbus.UInt32(int(args[0])))
    elif command == 'connectivity':
        mock.SetConnectivity(dbus.UInt32(int(args[0])))
    elif command == 'metered':
        manager_property('Metered', dbus.UInt32(int(args[0]), variant_level=1))
    elif command == 'checking':
        manager_property('ConnectivityCheckEnabled', dbus.Boolean(args[0] == 'on', variant_level=1))
    elif command == 'flap':
        count, seconds = int(args[0]), float(args[1])
        for i in range(count):
            mock.SetConnectivity(dbus.UInt32(3 if i % 2 == 0 else 4))
            time.sleep(seconds / count)
    else:
        sys.exit('unknown command ' + command)


if __name__ == '__main__':
    main(sys.argv)
