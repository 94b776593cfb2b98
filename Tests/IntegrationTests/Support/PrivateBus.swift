import Foundation
import LifelineTestKit
import Testing

/// A private `dbus-daemon --session` for one test (the real bus, on a private
/// instance), listening on a socket in a temporary folder.
final class PrivateBus: @unchecked Sendable {
    let directory: URL
    let address: String
    private let argv: [String]
    private var process: Spawned
    private var socket: String { directory.appendingPathComponent("bus").path }

    /// `configuration`: a dbus-daemon config file's text, instead of the session bus's.
    init(configuration: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory.appendingPathComponent("bus").path)"
        var config = "--session"
        if let configuration {
            let file = directory.appendingPathComponent("bus.conf").path
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            config = "--config-file=\(file)"
        }
        argv = ["dbus-daemon", config, "--nofork", "--nopidfile", "--address=\(address)"]
        process = try Spawned(argv)
        waitForSocket()
    }

    /// A session bus that starts services from `serviceFolder` only (none when
    /// nil), where `dbus-daemon --session` would start the machine's own.
    convenience init(serviceFolder: String?) throws {
        try self.init(configuration: Self.sessionConfiguration(listen: "unix:tmpdir=/tmp", serviceFolder: serviceFolder))
    }

    /// A session bus's configuration: everyone may own and call anything, and
    /// services are activated from `serviceFolder` alone.
    static func sessionConfiguration(listen address: String, serviceFolder: String?) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          \(serviceFolder.map { "<servicedir>\($0)</servicedir>" } ?? "")
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }

    private func waitForSocket() {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket), clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        if !FileManager.default.fileExists(atPath: socket) { Issue.record("dbus-daemon did not create \(socket)") }
    }

    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    var isRunning: Bool { process.isRunning }

    /// Stops the bus at once (SIGKILL), as when a session ends: its clients get
    /// no goodbye, only a closed socket.
    func kill() {
        process.kill()
    }

    /// A new bus at the same address, as after `systemctl --user restart dbus`.
    func restart() throws {
        process.kill()
        try? FileManager.default.removeItem(atPath: socket)
        process = try Spawned(argv)
        waitForSocket()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A long-running client (dbus-monitor, `lifeline watch`) whose standard output
/// and standard error go to a file the test reads while it runs.
final class BackgroundProcess: Sendable {
    let process: Spawned
    let outputURL: URL

    init(_ argv: [String], environment: [String: String], output: URL) throws {
        outputURL = output
        process = try Spawned(argv, environment: environment, stdout: .file(output.path), stderr: .stdout)
    }

    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }

    var lines: [String] { output.split(separator: "\n").map(String.init) }

    func stop() { process.stop() }
}

/// What `dbus-monitor` printed, as signals: member, then the string arguments
/// and the (name, value) pairs of a{sv} arguments, in order.
struct MonitoredSignal {
    var member: String
    var strings: [String]
    /// Dictionary entries: key → the printed variant value ("uint64 3", "string \"online\"").
    var entries: [(String, String)]

    func entry(_ key: String) -> String? { entries.first { $0.0 == key }?.1 }

    static func parse(_ text: String) -> [MonitoredSignal] {
        var out: [MonitoredSignal] = []
        var current: MonitoredSignal?
        var pendingKey: String?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if !line.hasPrefix(" ") {
                if let c = current { out.append(c) }
                current = nil
                pendingKey = nil
                if line.hasPrefix("signal "), let r = line.range(of: "member=") {
                    current = MonitoredSignal(member: String(line[r.upperBound...]), strings: [], entries: [])
                }
                continue
            }
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("variant "), let key = pendingKey {
                let value = t.dropFirst("variant".count).trimmingCharacters(in: .whitespaces)
                current?.entries.append((key, value))
                pendingKey = nil
            } else if t.hasPrefix("string \"") {
                let s = String(t.dropFirst("string \"".count).dropLast())
                if line.hasPrefix("         ") {
                    pendingKey = s  // a dict entry's key
                } else {
                    current?.strings.append(s)
                }
            }
        }
        if let c = current { out.append(c) }
        return out
    }
}
