import Foundation
import LifelineTestKit
import Testing

/// A monitor that does not stop when a reload releases it (stuck in a D-Bus
/// call it cannot cancel) must not speak for the network afterwards.
@Suite struct GhostMonitorTests {
    @Test func aMonitorStuckInGetAllIsNotHeardAfterAReloadReleasedIt() async throws {
        guard NetworkManagerMock.available, Harness.available(.tools(["tail"])) else { return }
        let nm = try NetworkManagerMock()
        try await nm.start()
        try nm.set("primary", "Home Wi-Fi", "802-11-wireless", "wlan0", "2")
        let fixture = try DaemonFixture(extraEnvironment: nm.environment)
        let network = ScriptedNetwork(fixture: fixture)
        try network.say("offline", reason: "cable out")
        let sinks = """
            [[sink]]
            kind = "log"
            """
        try fixture.writeConfig("""
            [debounce]
            down = "0ms"
            up = "0ms"

            [[monitor]]
            kind = "networkmanager"

            \(sinks)
            """)
        try fixture.start()
        await Harness.waitUntil("online through NetworkManager") { fixture.loggedStates().last == "online" }

        // NetworkManager says its primary connection changed, then hangs before
        // answering anything: the monitor sits in GetAll for the new connection.
        let freeze = """
            import dbus
            bus = dbus.SystemBus()
            NM = 'org.freedesktop.NetworkManager'
            mock = dbus.Interface(bus.get_object(NM, '/org/freedesktop/NetworkManager'), 'org.freedesktop.DBus.Mock')
            device = '/org/freedesktop/NetworkManager/Devices/eth9'
            mock.AddObject(device, NM + '.Device', {'Interface': 'eth9', 'State': dbus.UInt32(100)}, [])
            active = '/org/freedesktop/NetworkManager/ActiveConnection/eth9'
            mock.AddObject(active, NM + '.Connection.Active', {'Id': 'Ghost', 'Type': '802-3-ethernet',
                'Devices': dbus.Array([dbus.ObjectPath(device)], signature='o'), 'State': dbus.UInt32(2), 'Default': True}, [])
            mock.AddMethod(NM, 'Freeze', '', '',
                "path = __import__('dbus').ObjectPath('" + active + "');"
                "self.props['" + NM + "']['PrimaryConnection'] = path;"
                "self.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', "
                "['" + NM + "', {'PrimaryConnection': path}, []]);"
                "__import__('os').kill(__import__('os').getpid(), __import__('signal').SIGSTOP)")
            """
        let pid = try #require(nm.pid)
        let frozen = try Harness.run([NetworkManagerMock.python, "-c", freeze], environment: ProcessInfo.processInfo.environment.merging(nm.environment) { $1 })
        #expect(frozen.status == 0, "\(frozen.stderr)")
        // Its reply comes only once it runs again: not waited for.
        _ = try Harness.run(["timeout", "1", "dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                             "org.freedesktop.NetworkManager.Freeze"],
                            environment: ProcessInfo.processInfo.environment.merging(nm.environment) { $1 })
        await Harness.waitUntil("NetworkManager to hang") {
            ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") T ")
        }
        defer { kill(pid, SIGCONT) }

        // The reload replaces NetworkManager with a monitor that says offline.
        try fixture.writeConfig(network.config(debounceMs: 0, sinks: sinks))
        let daemonPID = try #require(fixture.process?.pid)
        kill(daemonPID, SIGHUP)
        await Harness.waitUntil(timeout: .seconds(10), "the stuck monitor to be released") {
            fixture.daemonLog.contains("did not stop within 5s")
        }
        await Harness.waitUntil("offline from the new monitor") { fixture.loggedStates().last == "offline" }

        // NetworkManager answers now; the released monitor's "online on eth9" must not count.
        kill(pid, SIGCONT)
        try await Task.sleep(for: .seconds(2))
        #expect(fixture.loggedStates().last == "offline", "\(fixture.loggedStates())")
        #expect(!fixture.loggedEvents().contains { $0["interface"] as? String == "eth9" }, "the released monitor was heard")
        #expect(await fixture.stop() == 0)
    }
}
