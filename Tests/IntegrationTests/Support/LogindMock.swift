import Foundation
import LifelineTestKit
import Testing

/// python-dbusmock's `logind` on a private bus that stands in for the system
/// bus (the daemon finds it through `DBUS_SYSTEM_BUS_ADDRESS`), with one login
/// session for the daemon (`XDG_SESSION_ID`). dbusmock logs every method call
/// it answers, Inhibit included.
final class LogindMock: @unchecked Sendable {
    /// Debian's interpreter, where python3-dbusmock is installed (a `python3`
    /// earlier in PATH may be another one without it).
    static let python = "/usr/bin/python3"
    let systemBus: PrivateBus
    let session: String
    let callLog: URL
    private var process: Spawned?
    private let sessionActive: Bool

    /// dbusmock and the tools it needs (asked of Python once per run).
    static let requirement = Harness.Requirement.all(.tools(["dbus-daemon", "gdbus"]), Harness.Requirement { dbusmockMissing })
    private static let dbusmockMissing: String? =
        (try? Harness.run([python, "-c", "import dbusmock"]).status) == 0 ? nil : "\(python) cannot import dbusmock"

    /// `started: false` leaves the bus without logind until `start()`.
    /// `bus`: the stand-in system bus (a new private one by default).
    init(sessionActive: Bool = true, started: Bool = true, bus: PrivateBus? = nil) throws {
        systemBus = try bus ?? PrivateBus()
        session = "ll\(String(UInt32.random(in: 0..<0xFFFFF), radix: 16))"
        callLog = systemBus.directory.appendingPathComponent("logind-calls.log")
        self.sessionActive = sessionActive
        if started { try start() }
    }

    /// logind takes its name on the bus, with the daemon's session.
    func start() throws {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address
        process = try Spawned([Self.python, "-m", "dbusmock", "--template", "logind", "--system", "-l", callLog.path],
                              environment: env)
        try Self.waitForName("org.freedesktop.login1", on: systemBus.address)
        _ = try gdbus("/org/freedesktop/login1", "org.freedesktop.DBus.Mock.AddSession",
                      [session, "seat0", "\(getuid())", "root", sessionActive ? "true" : "false"])
    }

    /// logind leaves the bus (as a crash would).
    func stop() {
        _ = process?.kill()
        process = nil
    }

    deinit {
        _ = process?.stop()
    }

    /// What the daemon needs to find this logind and its session.
    var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": systemBus.address, "XDG_SESSION_ID": session]
    }

    /// logind's signal before the machine sleeps (`true`) and after it woke up (`false`).
    func prepareForSleep(_ starting: Bool) throws {
        _ = try gdbus("/org/freedesktop/login1", "org.freedesktop.DBus.Mock.EmitSignal",
                      ["org.freedesktop.login1.Manager", "PrepareForSleep", "b", "[<\(starting)>]"])
    }

    /// The session is locked or switched away (`false`), or in front again.
    func setSessionActive(_ active: Bool) throws {
        _ = try gdbus("/org/freedesktop/login1/session/\(session)", "org.freedesktop.DBus.Mock.UpdateProperties",
                      ["org.freedesktop.login1.Session", "{'Active': <\(active)>}"])
    }

    /// The user's display session becomes this session (what logind picks for
    /// a daemon started outside any session).
    func makeDisplaySession() throws {
        // The template's GetUser adds a number to a string and fails; logind answers the user's path.
        _ = try gdbus("/org/freedesktop/login1", "org.freedesktop.DBus.Mock.AddMethod",
                      ["org.freedesktop.login1.Manager", "GetUser", "u", "o", "ret = '/org/freedesktop/login1/user/%d' % args[0]"])
        let session = "/org/freedesktop/login1/session/\(self.session)"
        _ = try gdbus("/org/freedesktop/login1/user/\(getuid())", "org.freedesktop.DBus.Properties.Set",
                      ["org.freedesktop.login1.User", "Display", "<('\(self.session)', objectpath '\(session)')>"])
    }

    /// GetUser answers with a long error text of several lines, as a hostile or broken peer might.
    func makeGetUserFail() throws {
        _ = try gdbus("/org/freedesktop/login1", "org.freedesktop.DBus.Mock.AddMethod",
                      ["org.freedesktop.login1.Manager", "GetUser", "u", "o",
                       "raise dbus.exceptions.DBusException('Traceback:\\n  File x\\n' + 'y' * 5000, name='org.freedesktop.DBus.Error.Failed')"])
    }

    /// A signal of logind's with any signature and arguments (GVariant text).
    func emit(_ member: String, signature: String, _ arguments: String) throws {
        _ = try gdbus("/org/freedesktop/login1", "org.freedesktop.DBus.Mock.EmitSignal",
                      ["org.freedesktop.login1.Manager", member, signature, arguments])
    }

    /// Method calls dbusmock answered, one line each ("… Inhibit "sleep" "Lifeline" …").
    var calls: [String] {
        ((try? String(contentsOf: callLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    var inhibitCalls: [String] { calls.filter { $0.contains(" Inhibit ") } }

    /// Inhibitor locks logind holds now: dbusmock drops one when every copy of
    /// its descriptor is closed.
    func inhibitorCount() throws -> Int {
        let out = try gdbus("/org/freedesktop/login1", "org.freedesktop.login1.Manager.ListInhibitors", [])
        return out.components(separatedBy: "'Lifeline'").count - 1
    }

    @discardableResult
    func gdbus(_ path: String, _ method: String, _ arguments: [String]) throws -> String {
        let r = try Harness.run(["gdbus", "call", "--address", systemBus.address, "--dest", "org.freedesktop.login1",
                                 "--object-path", path, "--method", method] + arguments)
        guard r.status == 0 else { throw MockError(description: "\(method) failed: \(r.stderr)") }
        return r.stdout
    }

    /// Polls (bounded) until `name` has an owner on the bus at `address`.
    static func waitForName(_ name: String, on address: String) throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let r = try? Harness.run(["gdbus", "call", "--address", address, "--dest", "org.freedesktop.DBus",
                                      "--object-path", "/org/freedesktop/DBus", "--method",
                                      "org.freedesktop.DBus.NameHasOwner", name])
            if r?.stdout.contains("true") == true { return }
            usleep(20_000)
        }
        throw MockError(description: "\(name) did not appear on \(address)")
    }

    struct MockError: Error, CustomStringConvertible { var description: String }
}

/// python-dbusmock's notification server on a private session bus: it answers
/// like a real one and logs every Notify, so a test counts the toasts shown.
final class CountingNotificationServer: @unchecked Sendable {
    let bus: PrivateBus
    let callLog: URL
    private let process: Spawned

    init() throws {
        bus = try PrivateBus()
        callLog = bus.directory.appendingPathComponent("notify-calls.log")
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        process = try Spawned([LogindMock.python, "-m", "dbusmock", "--template", "notification_daemon", "-l", callLog.path],
                              environment: env)
        try LogindMock.waitForName("org.freedesktop.Notifications", on: bus.address)
    }

    deinit {
        process.stop()
    }

    var environment: [String: String] { bus.environment }

    /// Notify calls so far: every toast shown or updated.
    var notifies: [String] {
        ((try? String(contentsOf: callLog, encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init).filter { $0.contains(" Notify ") }
    }
}
