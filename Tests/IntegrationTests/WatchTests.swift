import Foundation
import Testing

/// `lifeline watch` fed by the daemon over D-Bus.
@Suite(.serialized)
struct WatchTests {
    /// A change of reason within a state (no transition) is a line too, as it is
    /// when `watch` reads the state file: "a line per change".
    @Test func watchOverDBusPrintsAttributeOnlyChanges() async throws {
        guard Harness.available(.tools(["dbus-daemon"])) else { return }
        let bus = try PrivateBus()
        defer { bus.kill() }
        let daemon = try DaemonFixture(extraEnvironment: bus.environment)
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "dbus"
            """))
        try daemon.start()
        func say(_ reason: String) async throws {
            try monitor.say(line: Array(#"{"state":"online","interface":"eth0","reason":"\#(reason)"}"#.utf8) + [0x0A])
        }
        try await say("first look")

        // A viewer with a runtime folder of its own: it has no state file, so
        // what it prints can only come from D-Bus.
        let viewer = try DaemonFixture(extraEnvironment: bus.environment)
        await Harness.waitUntil("daemon online on the bus") {
            (try? viewer.cli(["status", "--format", "{reason}"]))?.stdout == "first look\n"
        }
        let watch = try LineReader(viewer, ["watch"])
        defer { watch.stop() }
        await Harness.waitUntil("first line") { watch.lines.contains("online via eth0: first look") }

        try await say("second look")
        await Harness.waitUntil("the new reason") { watch.lines.contains("online via eth0: second look") }
        try await say("third look")
        await Harness.waitUntil("the next reason") { watch.lines.contains("online via eth0: third look") }
        #expect(watch.lines == ["online via eth0: first look", "online via eth0: second look", "online via eth0: third look"],
                "\(watch.lines)")
        watch.stop()
        #expect(await daemon.stop() == 0)
    }
}
