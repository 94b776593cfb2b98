import Foundation
import LifelineTestKit
import Testing

/// A headless desktop for one test: a private session bus, an X server (Xvfb) and
/// a real notification server (dunst) on it. dunst can be killed and started
/// again, as a crashing notification server would.
final class Desktop: @unchecked Sendable {
    static let tools = ["dbus-daemon", "dbus-monitor", "Xvfb", "dunst", "dunstctl", "import", "identify", "xwininfo"]

    let bus: PrivateBus
    let display: String
    private let xvfb: Spawned
    private var dunst: Spawned?

    init() throws {
        bus = try PrivateBus()
        // A display number nobody uses (an X server leaves /tmp/.X11-unix/X<n>).
        var n = 90 + Int(getpid() % 50)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { n += 1 }
        display = ":\(n)"
        xvfb = try Spawned(["Xvfb", display, "-screen", "0", "1024x600x24", "-nolisten", "tcp"])
    }

    /// The environment a desktop client sees: the private bus and the display.
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["DISPLAY"] = display
        // GTK servers (xfce4-notifyd, notification-daemon) would otherwise have
        // the bus start an accessibility bus that outlives the test.
        env["NO_AT_BRIDGE"] = "1"
        env["GTK_A11Y"] = "none"
        return env
    }

    /// Starts dunst and waits (bounded) until it answers on the bus.
    func startNotificationServer() async throws {
        // dunst gives up at once if the X server is not accepting clients yet.
        await Harness.waitUntil("Xvfb on \(display)") {
            (try? Harness.run(["xwininfo", "-root", "-display", self.display]).status) == 0
        }
        dunst = try Spawned(["dunst"], environment: environment)
        await Harness.waitUntil("dunst on the bus") { (try? self.dunstctl(["is-paused"]).status) == 0 }
    }

    /// Starts another notification server than dunst and waits (bounded) until
    /// it owns its name on the bus. They differ: notification-daemon ignores
    /// CloseNotification, xfce4-notifyd draws every action as a button.
    func startNotificationServer(_ server: NotificationServer) async throws {
        if server == .dunst { return try await startNotificationServer() }
        await Harness.waitUntil("Xvfb on \(display)") {
            (try? Harness.run(["xwininfo", "-root", "-display", self.display]).status) == 0
        }
        dunst = try Spawned([server.executable], environment: environment)
        await Harness.waitUntil("\(server.rawValue) on the bus") {
            let r = try? Harness.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"],
                                     environment: self.environment)
            return r?.stdout.contains("boolean true") == true
        }
    }

    /// Notification windows on screen now (mapped top-level windows of `server`).
    func viewableWindows(of server: NotificationServer) -> Int {
        guard let tree = try? Harness.run(["xwininfo", "-root", "-children", "-display", display]).stdout else { return -1 }
        let ids = tree.split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("0x"), t.contains("\"\(server.windowName)\"") else { return nil }
            return String(t.prefix { $0 != " " })
        }
        return ids.filter { id in
            (try? Harness.run(["xwininfo", "-id", id, "-display", display]).stdout.contains("IsViewable")) == true
        }.count
    }

    /// Clicks the first button of the toast on screen, as a user would (xdotool).
    /// xfce4-notifyd draws the actions as a row of buttons along the toast's bottom.
    func clickFirstButton(of server: NotificationServer) throws {
        let found = try Harness.run(["xdotool", "search", "--onlyvisible", "--name", server.windowName], environment: environment)
        let window = try #require(found.stdout.split(separator: "\n").last.map(String.init), "no \(server.rawValue) window")
        let shape = try Harness.run(["xdotool", "getwindowgeometry", "--shell", window], environment: environment).stdout
        func value(_ key: String) -> Int? {
            shape.split(separator: "\n").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        let x = try #require(value("X")), y = try #require(value("Y")), height = try #require(value("HEIGHT"))
        let click = try Harness.run(["xdotool", "mousemove", "\(x + 60)", "\(y + height - 30)", "click", "1"], environment: environment)
        #expect(click.status == 0, "xdotool: \(click.stderr)")
    }

    /// The notification server started last is still running.
    var serverIsRunning: Bool { dunst?.isRunning == true }

    /// Clicks the toast's bottom row `fromRight` pixels left of its right edge:
    /// xfce4-notifyd aligns its buttons right, "Check now" (≈ 200) left of "Mute for 1 hour" (≈ 75).
    func clickButton(of server: NotificationServer, fromRight: Int) throws {
        let found = try Harness.run(["xdotool", "search", "--onlyvisible", "--name", server.windowName], environment: environment)
        let window = try #require(found.stdout.split(separator: "\n").last.map(String.init), "no \(server.rawValue) window")
        let shape = try Harness.run(["xdotool", "getwindowgeometry", "--shell", window], environment: environment).stdout
        func value(_ key: String) -> Int? {
            shape.split(separator: "\n").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        let x = try #require(value("X")), y = try #require(value("Y"))
        let width = try #require(value("WIDTH")), height = try #require(value("HEIGHT"))
        let click = try Harness.run(["xdotool", "mousemove", "\(x + width - fromRight)", "\(y + height - 30)", "click", "1"],
                                    environment: environment)
        #expect(click.status == 0, "xdotool: \(click.stderr)")
    }

    /// Kills dunst as a crash would (no goodbye on the bus).
    func killNotificationServer() {
        dunst?.kill()
        dunst = nil
    }

    /// Stops dunst (SIGSTOP): it keeps its name on the bus, takes calls and answers none.
    func pauseNotificationServer() {
        dunst?.signal(SIGSTOP)
    }

    func resumeNotificationServer() {
        dunst?.signal(SIGCONT)
    }

    /// Waits until a `dbus-monitor` is a monitor on the bus: it prints the loss
    /// of its own name when it becomes one, and sees every message after that.
    static func waitUntilMonitoring(_ monitor: BackgroundProcess) async {
        await Harness.waitUntil("dbus-monitor listening") { monitor.output.contains("member=NameLost") }
    }

    func dunstctl(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try Harness.run(["dunstctl"] + args, environment: environment)
    }

    /// Toasts on screen now.
    func displayedCount() -> Int {
        Int((try? dunstctl(["count", "displayed"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? "") ?? -1
    }

    /// A screenshot of the whole screen, kept under `artifacts/` as a test artifact.
    func screenshot(named name: String) throws -> URL {
        try Artifacts.screenshot(display: display, named: name, environment: environment)
    }

    deinit {
        killNotificationServer()
        xvfb.stop()
    }
}

/// Notification servers from Debian that run under Xvfb.
enum NotificationServer: String, Sendable, CaseIterable {
    case dunst
    case xfce4Notifyd = "xfce4-notifyd"
    case notificationDaemon = "notification-daemon"

    var executable: String {
        switch self {
        case .dunst: Harness.which("dunst") ?? "/usr/bin/dunst"
        case .xfce4Notifyd: "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd"
        case .notificationDaemon: "/usr/lib/notification-daemon/notification-daemon"
        }
    }

    /// The name its toast windows carry.
    var windowName: String {
        switch self {
        case .dunst: "Dunst"
        case .xfce4Notifyd: "xfce4-notifyd"
        case .notificationDaemon: "Notification"
        }
    }

    /// Installed here.
    var requirement: Harness.Requirement {
        let executable = executable
        return Harness.Requirement { FileManager.default.isExecutableFile(atPath: executable) ? nil : "\(executable) missing" }
    }

}

/// The Notify and CloseNotification calls that `dbus-monitor` saw on the bus.
struct NotificationCalls {
    struct Notify: Equatable {
        var appName: String
        var replacesID: UInt32
        var icon: String
        var summary: String
        var body: String
        /// Action identifiers and labels, in pairs.
        var actions: [String] = []
        /// The hints' names.
        var hints: [String] = []

        /// The labels a server that draws every action as a button would show.
        var actionLabels: [String] { stride(from: 1, to: actions.count, by: 2).map { actions[$0] } }
    }

    var notifies: [Notify] = []
    var closes: [UInt32] = []

    static func watch(_ desktop: Desktop, output: URL) throws -> BackgroundProcess {
        try watch(environment: desktop.environment, output: output)
    }

    /// Watches the session bus that `environment` names. Only calls to the
    /// well-known name: GNOME Shell's notification service forwards each to the shell.
    static func watch(environment: [String: String], output: URL) throws -> BackgroundProcess {
        try BackgroundProcess(
            ["dbus-monitor", "--session",
             "type='method_call',interface='org.freedesktop.Notifications',member='Notify',destination='org.freedesktop.Notifications'",
             "type='method_call',interface='org.freedesktop.Notifications',member='CloseNotification',destination='org.freedesktop.Notifications'"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, output: output)
    }

    /// Parses dbus-monitor's text: a call's header line, then one line per argument.
    init(_ text: String) {
        var block: [String] = []
        var actions: [String] = []
        var hints: [String] = []
        var arrays = 0
        var member = ""
        func flush() {
            let args = block.map { $0.trimmingCharacters(in: .whitespaces) }
            func string(_ i: Int) -> String {
                guard i < args.count, args[i].hasPrefix("string \"") else { return "" }
                return String(args[i].dropFirst("string \"".count).dropLast())
            }
            func uint(_ i: Int) -> UInt32 {
                guard i < args.count, args[i].hasPrefix("uint32 ") else { return 0 }
                return UInt32(args[i].dropFirst("uint32 ".count)) ?? 0
            }
            if member == "Notify", args.count >= 5 {
                notifies.append(Notify(appName: string(0), replacesID: uint(1), icon: string(2), summary: string(3), body: string(4),
                                       actions: actions, hints: hints))
            } else if member == "CloseNotification", !args.isEmpty {
                closes.append(uint(0))
            }
            block = []
            actions = []
            hints = []
            arrays = 0
            member = ""
        }
        for raw in text.split(separator: "\n") {
            let line = String(raw)
            if line.hasPrefix("method call") {
                flush()
                member = line.range(of: "member=").map { String(line[$0.upperBound...]) } ?? ""
            } else if line.hasPrefix("   "), !member.isEmpty, !line.hasPrefix("      ") {
                block.append(line)
                if line.hasPrefix("   array [") { arrays += 1 }
            } else if arrays == 1, line.hasPrefix("      string \""), !member.isEmpty {
                // The first array of a Notify call is its actions.
                actions.append(String(line.dropFirst("      string \"".count).dropLast()))
            } else if arrays == 2, line.hasPrefix("         string \""), !member.isEmpty {
                // The second is its hints: a dict entry's key, then its variant.
                hints.append(String(line.dropFirst("         string \"".count).dropLast()))
            }
        }
        flush()
    }
}
