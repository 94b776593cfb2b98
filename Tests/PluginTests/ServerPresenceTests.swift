import Foundation
import LifelineCore
import LifelineTestKit
import Logging
import Synchronization
import Testing
@testable import NotifySink

/// The real bus, with the sink's reports about the server written down.
final class RecordingControl: BusControl {
    let bus: Bus
    private let log = Mutex<[Bool]>([])

    init(_ bus: Bus) { self.bus = bus }

    var reports: [Bool] { log.withLock { $0 } }
    var current: StateEvent { bus.current }
    func requestCheck() { bus.requestCheck() }
    func check(timeout: Duration) async -> StateEvent { await bus.check(timeout: timeout) }
    func mute(for duration: Duration) { bus.mute(for: duration) }
    func reportNotificationServer(present: Bool) {
        log.withLock { $0.append(present) }
        bus.reportNotificationServer(present: present)
    }
}

/// The sink owns the fact "a notification server is on the session bus" and
/// tells the core, so every other sink reads it from there (tmux's fallback).
@Suite(.serialized) struct ServerPresenceTests {
    @Test func theSinkTellsTheCoreWhenANotificationServerComesAndGoes() async throws {
        let tools = ["dbus-daemon", "python3"]
        let missing = tools.filter { tool in
            !(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
                .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
        // Missing tools skip the test (with the reason), except in CI, where they fail it.
        guard missing.isEmpty else {
            if ProcessInfo.processInfo.environment["LIFELINE_REQUIRE_INTEGRATION"] == "1" {
                Issue.record("cannot run: missing \(missing) (LIFELINE_REQUIRE_INTEGRATION=1)")
                return
            }
            try Test.cancel("missing \(missing.joined(separator: ", "))")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-presence-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let address = "unix:path=\(dir.path)/bus"
        let daemon = try Self.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"])
        defer { Self.kill(daemon) }
        try await Self.waitUntil("the bus socket") { FileManager.default.fileExists(atPath: "\(dir.path)/bus") }
        // libnotify's GDBus connects to the session bus named in the environment.
        let before = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
        defer { if let before { setenv("DBUS_SESSION_BUS_ADDRESS", before, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") } }

        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(), logger: Logger(label: "test"))
        let control = RecordingControl(bus)
        let mailbox = bus.attachSink(policy: NotifySink.delivery)
        let context = PluginContext(name: "sink libnotify", logger: Logger(label: "test"), paths: .fromEnvironment(), control: control)
        let sink = try NotifySink(config: .init(), context: context)
        let running = Task { try await sink.run(updates: SinkUpdates(mailbox)) }

        try await Self.waitUntil("the first report") { control.reports == [false] }
        let server = try Self.spawn(["python3", "-c", Self.silentServer, address])
        try await Self.waitUntil("a server took the name") { control.reports == [false, true] }
        Self.kill(server)
        try await Self.waitUntil("the server is gone") { control.reports == [false, true, false] }
        bus.shutdown()
        _ = try await running.value
    }

    /// Owns org.freedesktop.Notifications on the bus and never answers a call:
    /// the plain D-Bus wire protocol, so it needs nothing but Python.
    static let silentServer = #"""
import os, socket, struct, sys
path = sys.argv[1].split("unix:path=", 1)[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
assert s.recv(4096).startswith(b"OK")
s.sendall(b"BEGIN\r\n")
def pad(b, n):
    return b + b"\0" * ((-len(b)) % n)
def field(code, sig, value):
    v = value.encode()
    data = (bytes([len(v)]) if sig == "g" else struct.pack("<I", len(v))) + v + b"\0"
    return bytes([code, 1]) + sig.encode() + b"\0" + data
def call(serial, member, sig="", body=b""):
    fields = [(1, "o", "/org/freedesktop/DBus"), (2, "s", "org.freedesktop.DBus"), (3, "s", member),
              (6, "s", "org.freedesktop.DBus")] + ([(8, "g", sig)] if sig else [])
    array = b""
    for f in fields:
        array = pad(array, 8) + field(*f)
    head = struct.pack("<cBBBIII", b"l", 1, 0, 1, len(body), serial, len(array)) + array
    return pad(head, 8) + body
name = b"org.freedesktop.Notifications"
s.sendall(call(1, "Hello") + call(2, "RequestName", "su", pad(struct.pack("<I", len(name)) + name + b"\0", 4) + struct.pack("<I", 0)))
while s.recv(65536):
    pass
"""#

    static func spawn(_ argv: [String]) throws -> Spawned {
        try Spawned(argv)
    }

    static func kill(_ p: Spawned) {
        p.stop()
    }

    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        if !(await eventually(timeout: .seconds(10), every: .milliseconds(10), condition)) {
            Issue.record("timed out waiting for \(what)")
        }
    }
}
