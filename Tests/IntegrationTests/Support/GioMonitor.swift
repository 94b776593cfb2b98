import Foundation
import LifelineTestKit
import Testing

/// A GLib application asking `g_network_monitor_get_default()`, with Lifeline's
/// GIO module found through `GIO_EXTRA_MODULES` (the build's `.build/gio`):
/// `Resources/network_monitor_client.py` (Python, gi) or the same client in C,
/// compiled by the test. Nobody's code but GLib's picks the monitor.
final class GioMonitorClient: @unchecked Sendable {
    /// One line the client printed: `start`, `changed` (network-changed) or `notify`.
    struct Line {
        var time: Int64
        var kind: String
        /// `start`: the monitor's type name; `notify`: the property.
        var name: String
        var available: Bool
        /// GNetworkConnectivity: 1 local, 2 limited, 3 portal, 4 full.
        var connectivity: Int
        var metered: Bool
        /// `start` only: how long get_default() took, and the process's name on the bus.
        var getDefaultMs: Double?
        var uniqueName: String?
    }

    enum Language { case python, c }

    static var resources: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Resources").standardized.path
    }

    /// The build's module folder, or the one `LIFELINE_GIO_MODULES` names (an
    /// installed module's folder; an empty one shows what GLib does alone).
    static var moduleFolder: String {
        ProcessInfo.processInfo.environment["LIFELINE_GIO_MODULES"] ?? Installation.repo + "/.build/gio"
    }

    /// What the clients need: root is not needed, Debian's python3-gi and a C compiler are.
    static let requirement = Harness.Requirement.all(.tools(["make", "cc", "pkg-config", "gio-querymodules", "dbus-daemon"]),
                                                     Harness.Requirement { pythonGIMissing() })

    private static func pythonGIMissing() -> String? {
        let r = try? Harness.run(["/usr/bin/python3", "-c", "from gi.repository import Gio"])
        return r?.status == 0 ? nil : "missing Debian's python3-gi (gir1.2-glib-2.0)"
    }

    /// `make gio-module`: the module as the package builds it, up to date.
    static func buildModule() throws {
        let made = try Installation.make("gio-module", [:])
        guard made.status == 0 else { throw NetnsLab.Failure(description: "make gio-module: \(made.stderr)") }
    }

    /// An application's environment on `bus`: the module's folder, and no system
    /// bus (so NetworkManager's monitor, next in line, declines as on a machine without it).
    static func environment(bus: PrivateBus, folder: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + folder + "/no-system-bus"
        env["GIO_EXTRA_MODULES"] = moduleFolder
        env["GIO_USE_NETWORK_MONITOR"] = nil
        return env
    }

    /// The C client, compiled into `folder`.
    static func compileC(into folder: String) throws -> String {
        let binary = folder + "/network_monitor_client"
        let built = try Harness.run(["sh", "-c", "cc -o \"$1\" \"$2\" $(pkg-config --cflags --libs gio-2.0)", "sh",
                                     binary, resources + "/network_monitor_client.c"])
        guard built.status == 0 else { throw NetnsLab.Failure(description: "cc network_monitor_client.c: \(built.stderr)") }
        return binary
    }

    let process: BackgroundProcess

    /// Starts a watching client (`prefix` e.g. `ip netns exec NS`) and waits for its start line.
    init(_ language: Language, environment: [String: String], folder: String, name: String, prefix: [String] = []) async throws {
        let argv: [String]
        switch language {
        case .python: argv = ["/usr/bin/python3", Self.resources + "/network_monitor_client.py", "watch"]
        case .c: argv = [try Self.compileC(into: folder)]
        }
        process = try BackgroundProcess(prefix + argv, environment: environment,
                                        output: URL(fileURLWithPath: folder + "/\(name).out"))
        let started = await Harness.waitUntil(timeout: .seconds(20), "the \(name) client's start line (\(process.output))") {
            start != nil
        }
        if !started { throw NetnsLab.Failure(description: "\(name) did not start: \(process.output)") }
    }

    deinit { process.stop() }

    var lines: [Line] {
        process.lines.compactMap { text in
            let w = text.split(separator: " ").map(String.init)
            guard w.count >= 5, let time = Int64(w[0]) else { return nil }
            switch w[1] {
            case "start" where w.count >= 8:
                return Line(time: time, kind: "start", name: w[2], available: w[4] == "1", connectivity: Int(w[5]) ?? 0,
                            metered: w[6] == "1", getDefaultMs: Double(w[3]), uniqueName: w[7])
            case "changed":
                return Line(time: time, kind: "changed", name: "", available: w[2] == "1", connectivity: Int(w[3]) ?? 0,
                            metered: w[4] == "1")
            case "notify" where w.count >= 6:
                return Line(time: time, kind: "notify", name: w[2], available: w[3] == "1", connectivity: Int(w[4]) ?? 0,
                            metered: w[5] == "1")
            default:
                return nil
            }
        }
    }

    var start: Line? { lines.first { $0.kind == "start" } }

    /// Every `network-changed` so far.
    var changes: [Line] { lines.filter { $0.kind == "changed" } }

    /// Waits until the last `network-changed` carries `connectivity` (and `metered`, when given).
    @discardableResult
    func waitForChange(to connectivity: Int, metered: Bool? = nil, timeout: Duration = .seconds(20),
                       sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await Harness.waitUntil(timeout: timeout, "network-changed to connectivity \(connectivity) (\(process.output))",
                                sourceLocation: sourceLocation) {
            guard let last = changes.last else { return false }
            return last.connectivity == connectivity && (metered == nil || last.metered == metered)
        }
    }
}

/// The one connectivity GLib reports for each state Lifeline publishes.
enum GioConnectivity {
    static let local = 1, limited = 2, portal = 3, full = 4

    static func of(_ state: String) -> Int {
        switch state {
        case "offline": local
        case "limited": limited
        case "portal": portal
        default: full
        }
    }
}
