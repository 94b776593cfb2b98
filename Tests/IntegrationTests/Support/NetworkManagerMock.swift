import Foundation
import LifelineTestKit
import Testing

/// python-dbusmock's `networkmanager` template on a private bus that stands in
/// for the system bus (`DBUS_SYSTEM_BUS_ADDRESS`): the wifi, portal and
/// flapping NetworkManager a real one cannot produce here.
/// `Resources/nm_mock.py` sets its properties.
final class NetworkManagerMock: @unchecked Sendable {
    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Resources/nm_mock.py").standardized.path

    /// The stand-in system bus: a `PrivateBus`, or a dbus-daemon of this mock's
    /// own on a socket path the test chose (to start it after the daemon).
    private let bus: PrivateBus?
    private let ownBus: Spawned?
    let address: String
    private var mock: Spawned?
    private let logPath: String
    /// The socket of the bus started here, which dbus-daemon leaves behind when killed.
    private var ownSocket: String?

    /// Whether dbus-daemon and python-dbusmock are here (a failure under
    /// LIFELINE_REQUIRE_INTEGRATION=1 when not).
    static let requirement = Harness.Requirement.all(.tools(["dbus-daemon", "dbus-send"]), Harness.Requirement { dbusmockMissing })
    private static let dbusmockMissing: String? =
        (try? Harness.run([python, "-c", "import dbusmock"]).status) == 0 ? nil : "python3-dbusmock missing"

    init() throws {
        let bus = try PrivateBus()
        self.bus = bus
        ownBus = nil
        address = bus.address
        logPath = bus.directory.appendingPathComponent("dbusmock.log").path
    }

    /// On `bus` (a stock system bus, say), which the caller keeps.
    init(bus: PrivateBus) {
        self.bus = bus
        ownBus = nil
        address = bus.address
        logPath = bus.directory.appendingPathComponent("dbusmock-nm.log").path
    }

    /// A bus listening at `socket` (which must not exist yet), started now.
    init(socket: String) async throws {
        bus = nil
        address = "unix:path=\(socket)"
        ownBus = try Spawned(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"])
        ownSocket = socket
        logPath = socket + ".dbusmock.log"
        await Harness.waitUntil("dbus-daemon at \(socket)") { FileManager.default.fileExists(atPath: socket) }
    }

    /// Every method call the mock received, one per line ("… CheckConnectivity …").
    var calls: String { (try? String(contentsOfFile: callLogPath, encoding: .utf8)) ?? "" }
    private var callLogPath: String { logPath + ".calls" }

    /// What the daemon needs to take this bus for the system bus.
    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// Starts NetworkManager (the mock) and waits until it owns its name.
    func start() async throws {
        mock = try Spawned([Self.python, "-m", "dbusmock", "--system", "-t", "networkmanager", "-l", callLogPath],
                           environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                           stdout: .file(logPath), stderr: .stdout)
        await Harness.waitUntil("the NetworkManager mock on the bus") { hasOwner() }
    }

    /// Stops it (NetworkManager leaves the bus) and waits until the name is free.
    func stop() async {
        _ = mock?.stop()
        mock = nil
        await Harness.waitUntil("NetworkManager to leave the bus") { !hasOwner() }
    }

    /// `nm_mock.py ARGS`: sets properties the way NetworkManager would change them.
    func set(_ arguments: String...) throws {
        let r = try Harness.run([Self.python, Self.script] + arguments,
                                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        if r.status != 0 { Issue.record("nm_mock.py \(arguments) failed: \(r.stderr)") }
    }

    private func hasOwner() -> Bool {
        let r = try? Harness.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.NetworkManager"],
                                 environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        return r?.stdout.contains("boolean true") == true
    }

    deinit {
        _ = mock?.kill()
        _ = ownBus?.kill()
        if let ownSocket { unlink(ownSocket) }
        try? FileManager.default.removeItem(atPath: logPath)
        try? FileManager.default.removeItem(atPath: callLogPath)
    }
}
