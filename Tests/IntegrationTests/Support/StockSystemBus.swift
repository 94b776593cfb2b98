import Foundation
import LifelineTestKit
import Testing

/// A private system bus with Debian's stock policy (`/usr/share/dbus-1/system.conf`),
/// as another user on the machine meets it: anyone may send signals, to any
/// connection. Only what a private instance needs is changed: it listens on a
/// socket in a temporary folder, runs as the test's user, writes no pid file
/// and starts no services, and root may own any name (python-dbusmock plays
/// NetworkManager and logind as root).
enum StockSystemBus {
    static let stockConfiguration = "/usr/share/dbus-1/system.conf"
    /// Debian's interpreter, where python3-gi is installed.
    static let python = "/usr/bin/python3"
    static let spoofScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Resources/spoof_signals.py").standardized.path
    /// The other user, and how to become them.
    static let asNobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    /// Whether the stock policy, a second user and the tools are here; under
    /// LIFELINE_REQUIRE_INTEGRATION=1 their absence is a failure.
    static let requirement = Harness.Requirement.all(.rootAnd(["dbus-daemon", "setpriv"]), Harness.Requirement { othersMissing })
    private static let othersMissing: String? = {
        var missing: String?
        if !FileManager.default.fileExists(atPath: stockConfiguration) { missing = stockConfiguration }
        if getpwnam("nobody") == nil { missing = "the user nobody" }
        if (try? Harness.run([python, "-c", "from gi.repository import Gio"]).status) != 0 { missing = "\(python) with Gio (python3-gi)" }
        return missing.map { "missing \($0)" }
    }()

    static func start() throws -> PrivateBus {
        var conf = try String(contentsOfFile: stockConfiguration, encoding: .utf8)
        for element in ["user", "pidfile", "servicehelper"] {
            conf = conf.replacingOccurrences(of: "<\(element)>[^<]*</\(element)>", with: "", options: .regularExpression)
        }
        for empty in ["<fork/>", "<standard_system_servicedirs/>", "<syslog/>"] {
            conf = conf.replacingOccurrences(of: empty, with: "")
        }
        conf = conf.replacingOccurrences(of: "<includedir>system.d</includedir>",
                                         with: "<includedir>/usr/share/dbus-1/system.d</includedir>")
        conf = conf.replacingOccurrences(of: "</busconfig>", with: """
              <policy user="root"><allow own="*"/><allow send_destination="*"/></policy>
            </busconfig>
            """)
        let bus = try PrivateBus(configuration: conf)
        // The other user must reach the socket.
        chmod(bus.directory.path, 0o755)
        return bus
    }

    /// Sends, as the user nobody (or as this user, on a session bus), the
    /// signals of `spoof_signals.py SCENARIO` to every connection of `pid`;
    /// returns the connections reached.
    static func spoof(_ scenario: String, at address: String, pid: pid_t, asNobody: Bool = true) throws -> [String] {
        let argv = spoofArgv(scenario, at: address, pid: pid, asNobody: asNobody)
        let r = try Harness.run(argv)
        #expect(r.status == 0, "spoof_signals.py \(scenario): \(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// The command line of `spoof(…)`, for a test that runs it beside its own work.
    static func spoofArgv(_ scenario: String, at address: String, pid: pid_t, asNobody: Bool = true, count: Int? = nil) -> [String] {
        (asNobody ? Self.asNobody : []) + [python, spoofScript, address, "\(pid)", scenario] + (count.map { ["\($0)"] } ?? [])
    }
}
