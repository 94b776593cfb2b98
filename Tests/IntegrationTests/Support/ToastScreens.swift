import Foundation
import LifelineTestKit
import Testing

/// A toast as a notification server shows it: what the server itself reports
/// (`makoctl list`, GNOME Shell's message tray), not what was sent to it.
struct ShownToast: Equatable, CustomStringConvertible {
    var summary: String
    var body: String
    /// The actions the user can pick, as labels, in the server's order.
    var buttons: [String]

    var description: String { "\(summary) | \(body) | \(buttons)" }
}

/// A real notification server on a headless desktop, driven as a user would.
protocol ToastScreen: AnyObject, Sendable {
    /// `GetServerInformation`'s name.
    var serverName: String { get }
    /// What the daemon needs to reach this server (its session bus).
    var environment: [String: String] { get }
    var serverIsRunning: Bool { get }
    /// Our toasts on screen now, oldest first.
    func shown() -> [ShownToast]
    /// Picks the action labelled `label` on our newest toast, as a user would;
    /// false when this server offers no way to do it here.
    func pick(_ label: String) async throws -> Bool
    /// The whole screen, under `artifacts/`, once the toast saying `summary` is drawn.
    func screenshot(named name: String, showing summary: String) async throws -> URL
}

/// dunst, xfce4-notifyd or notification-daemon on Xvfb (`Desktop`). None tells
/// what its toasts say: the test reads that from the Notify calls and the
/// pictures, and counts the toasts here (dunstctl, mapped windows).
final class X11ToastScreen: ToastScreen, @unchecked Sendable {
    let server: NotificationServer
    let desktop: Desktop

    init(_ server: NotificationServer) throws {
        self.server = server
        desktop = try Desktop()
    }

    func start() async throws { try await desktop.startNotificationServer(server) }

    var serverName: String { server.rawValue }
    var environment: [String: String] { desktop.environment }
    var serverIsRunning: Bool { desktop.serverIsRunning }

    func shown() -> [ShownToast] {
        let count = server == .dunst ? desktop.displayedCount() : desktop.viewableWindows(of: server)
        return Array(repeating: ShownToast(summary: "?", body: "?", buttons: []), count: max(0, count))
    }

    /// dunst: a click on the toast (its default action, Check now); xfce4-notifyd:
    /// the button. Other buttons have no place known here.
    func pick(_ label: String) async throws -> Bool {
        switch (server, label) {
        case (.dunst, "Check now"): return try desktop.dunstctl(["action", "0"]).status == 0
        case (.xfce4Notifyd, "Check now"), (.xfce4Notifyd, "Mute for 1 hour"):
            try desktop.clickButton(of: server, fromRight: label == "Check now" ? 200 : 75)
            return true
        default: return false
        }
    }

    func screenshot(named name: String, showing summary: String) async throws -> URL {
        try await Task.sleep(for: .milliseconds(300))  // not a readiness wait: X servers draw after they map
        return try desktop.screenshot(named: name)
    }
}

/// mako or swaync on a headless sway, as the user `nobody`.
final class SwayToastScreen: ToastScreen, @unchecked Sendable {
    enum Server: String, CaseIterable { case mako, swaync }

    static func tools(_ server: Server) -> [String] {
        WaylandTray.tools + (server == .mako ? ["mako", "makoctl", "busctl"] : ["swaync", "swaync-client"])
    }

    let server: Server
    let desktop: WaylandTray
    private var process: Spawned?

    init(_ server: Server) throws {
        self.server = server
        desktop = try WaylandTray(screen: (1280, 720))
    }

    var serverName: String { server == .mako ? "mako" : "SwayNotificationCenter" }

    func start() async throws {
        try await desktop.start(bar: false)
        process = try desktop.launch([server.rawValue], log: server.rawValue)
        if !(await Harness.waitUntil("\(server.rawValue) on the bus", { desktop.owns("org.freedesktop.Notifications") })) {
            throw WaylandTray.StartFailure(description: "\(server.rawValue) did not start")
        }
    }

    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": desktop.busAddress] }

    var serverIsRunning: Bool { process?.isRunning == true }

    func shown() -> [ShownToast] {
        switch server {
        case .mako: return makoList().map(\.toast)
        case .swaync:
            // swaync tells how many it shows; what they say is read off the screen by the test.
            let count = Int((try? Harness.run(["swaync-client", "-c", "-sw"], environment: desktop.environment).stdout)?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            return Array(repeating: ShownToast(summary: "?", body: "?", buttons: []), count: count)
        }
    }

    func pick(_ label: String) async throws -> Bool {
        // swaync takes clicks only: headless sway has no pointer to click with.
        guard server == .mako, let toast = makoList().last, let key = toast.actions.first(where: { $0.value == label })?.key
        else { return false }
        let r = try Harness.run(["makoctl", "invoke", "-n", String(toast.id), key], environment: desktop.environment)
        #expect(r.status == 0, "makoctl invoke: \(r.stderr)")
        return r.status == 0
    }

    /// Taken again (bounded) until two in a row are alike: swaync fades its toasts in.
    func screenshot(named name: String, showing summary: String) async throws -> URL {
        let previous = desktop.root.appendingPathComponent("previous.png")
        var shot = try desktop.screenshot(named: name)
        for _ in 0..<20 {
            try? FileManager.default.removeItem(at: previous)
            try FileManager.default.copyItem(at: shot, to: previous)
            try await Task.sleep(for: .milliseconds(50))
            shot = try desktop.screenshot(named: name)
            if WaylandTray.differingPixels(previous, shot) == 0 { break }
        }
        return shot
    }

    /// `makoctl list`: busctl's JSON of mako's ListNotifications.
    private func makoList() -> [(id: Int, toast: ShownToast, actions: [String: String])] {
        guard let r = try? Harness.run(["makoctl", "list"], environment: desktop.environment), r.status == 0,
              let json = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let outer = json["data"] as? [[[String: Any]]], let list = outer.first else { return [] }
        func value<T>(_ n: [String: Any], _ key: String) -> T? { (n[key] as? [String: Any])?["data"] as? T }
        return list.compactMap { n in
            guard value(n, "app-name") as String? == "Lifeline" else { return nil }
            let actions: [String: String] = value(n, "actions") ?? [:]
            // mako keeps no order of actions: its menu lists them as its dictionary does.
            let toast = ShownToast(summary: value(n, "summary") ?? "", body: value(n, "body") ?? "",
                                   buttons: actions.values.sorted())
            return (value(n, "id") ?? 0, toast, actions)
        }.sorted { $0.id < $1.id }
    }
}

/// GNOME Shell 43, headless, as the user `nobody`: its own session bus (with
/// only the services it needs: the one that owns org.freedesktop.Notifications
/// for it is started by the bus), and python-dbusmock's logind on a private
/// system bus. `--unsafe-mode` lets the test read the message tray through
/// `org.gnome.Shell.Eval` and take screenshots.
final class GnomeShellScreen: ToastScreen, @unchecked Sendable {
    static let tools = ["gnome-shell", "gjs", "dbus-daemon", "setpriv", "gdbus"]
    static let user = "nobody"
    static let group = "nogroup"

    let root: URL
    let busAddress: String
    let systemBusAddress: String
    private var processes: [Spawned] = []
    private var shell: Spawned?
    let session = "gs\(getpid())"

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-gnome-\(UUID().uuidString.prefix(8))")
        let runtime = root.appendingPathComponent("run")
        let services = root.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        // A first start warns once, in a banner of its own, that there is no lock
        // screen without GDM; our toasts would queue behind it.
        let shellData = root.appendingPathComponent(".local/share/gnome-shell")
        try FileManager.default.createDirectory(at: shellData, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: shellData.appendingPathComponent("lock-warning-shown").path, contents: nil)
        // The shell starts org.gnome.Shell.Notifications (gjs) through the bus; that
        // service owns org.freedesktop.Notifications. No other server may be activatable.
        for name in ["org.gnome.Shell.Notifications.service", "ca.desrt.dconf.service"] {
            try? FileManager.default.copyItem(atPath: "/usr/share/dbus-1/services/\(name)",
                                              toPath: services.appendingPathComponent(name).path)
        }
        busAddress = "unix:path=\(root.appendingPathComponent("bus").path)"
        systemBusAddress = "unix:path=\(root.appendingPathComponent("system-bus").path)"
        for (name, address, type) in [("bus", busAddress, "session"), ("system-bus", systemBusAddress, "system")] {
            try SharedBus.writeConfig(
                to: root.appendingPathComponent("\(name).conf"), type: type, address: address, user: Self.user,
                serviceDirectory: type == "session" ? services : nil)
        }
        _ = try Harness.run(["chown", "-R", "\(Self.user):\(Self.group)", root.path])
        chmod(runtime.path, 0o700)
    }

    var serverName: String { "gnome-shell" }

    private var userEnvironment: [String] {
        ["PATH=/usr/bin:/bin", "HOME=\(root.path)", "XDG_RUNTIME_DIR=\(root.appendingPathComponent("run").path)",
         "DBUS_SESSION_BUS_ADDRESS=\(busAddress)", "DBUS_SYSTEM_BUS_ADDRESS=\(systemBusAddress)",
         "XDG_SESSION_ID=\(session)", "NO_AT_BRIDGE=1", "GTK_A11Y=none"]
    }

    private func asUser(_ argv: [String]) -> [String] {
        ["setpriv", "--reuid=\(Self.user)", "--regid=\(Self.group)", "--clear-groups", "env", "-i"] + userEnvironment + argv
    }

    private func log(_ name: String) -> Spawned.Output { .file(root.appendingPathComponent("\(name).log").path) }

    /// Starts the desktop, giving the shell `startUp` to take the notification
    /// name and as long again to complete its start-up; when any step fails,
    /// whatever it started is stopped before the error goes on.
    func start(startUp: Duration = .seconds(60)) async throws {
        do {
            try await startAll(startUp: startUp)
        } catch {
            stop()
            throw error
        }
    }

    /// Each process heads a process group of its own, and what the buses start
    /// (the shell's notification service, dconf) is in its bus's group: one
    /// SIGKILL per group ends them all, though none of them carries anything of
    /// the test's environment to be found by.
    private func spawn(_ argv: [String], log name: String, environment: [String: String]? = nil) throws -> Spawned {
        let p = try Spawned(argv, environment: environment, stdout: log(name), stderr: .stdout, newProcessGroup: true)
        processes.append(p)
        return p
    }

    /// Ends every process of this desktop and whatever they started.
    func stop() {
        for p in processes.reversed() { p.killGroup() }
        processes = []
    }

    private func startAll(startUp: Duration) async throws {
        // The buses run as the desktop's user, so what they start (the shell's
        // notification service, dconf) runs as that user, in its home.
        for name in ["bus", "system-bus"] {
            _ = try spawn(asUser(["dbus-daemon", "--config-file=\(root.appendingPathComponent("\(name).conf").path)",
                                  "--nofork", "--nopidfile"]), log: name)
        }
        try LogindMock.waitForName("org.freedesktop.DBus", on: systemBusAddress)
        try LogindMock.waitForName("org.freedesktop.DBus", on: busAddress)
        // The daemon's Notify calls and every answer on the bus (`pick` waits for them).
        _ = try spawn(["dbus-monitor", "--address", busAddress,
                       "type='method_call',member='Notify',destination='org.freedesktop.Notifications'",
                       "type='method_return'", "type='error'"], log: "answers")
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = systemBusAddress
        _ = try spawn([LogindMock.python, "-m", "dbusmock", "--template", "logind", "--system"], log: "logind", environment: env)
        try LogindMock.waitForName("org.freedesktop.login1", on: systemBusAddress)
        let added = try Harness.run(["gdbus", "call", "--address", systemBusAddress, "--dest", "org.freedesktop.login1",
                                     "--object-path", "/org/freedesktop/login1", "--method", "org.freedesktop.DBus.Mock.AddSession",
                                     session, "seat0", "65534", Self.user, "true"])
        guard added.status == 0 else { throw WaylandTray.StartFailure(description: "logind session: \(added.stderr)") }
        shell = try spawn(asUser(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x800",
                                  "--unsafe-mode"]), log: "gnome-shell")
        // A cold start on a busy machine takes a while: 7 s seen on two cores.
        if !(await Harness.waitUntil(timeout: startUp, "GNOME Shell's notifications on the bus") {
            self.owns("org.freedesktop.Notifications")
        }) {
            throw WaylandTray.StartFailure(description: "gnome-shell did not take org.freedesktop.Notifications:\n\(logs)")
        }
        // The shell takes that name before it has finished starting: until then
        // (its start-up animation, drawn in software here, and the session's
        // first steps) it answers calls seconds late on a busy machine, and the
        // daemon's first toast waits for three of them. A user's desktop is up
        // when the shell says so ("GNOME Shell started"): its start-up is complete.
        if !(await Harness.waitUntil(timeout: startUp, "GNOME Shell to complete its start-up") {
            (try? self.eval("Main.layoutManager._startingUp")) as? Bool == false
        }) {
            throw WaylandTray.StartFailure(description: "gnome-shell did not complete its start-up:\n\(logs)")
        }
    }

    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": busAddress] }

    var serverIsRunning: Bool { shell?.isRunning == true }

    var logs: String { (try? String(contentsOf: root.appendingPathComponent("gnome-shell.log"), encoding: .utf8)) ?? "" }

    func owns(_ name: String) -> Bool {
        let r = try? Harness.run(["gdbus", "call", "--address", busAddress, "--dest", "org.freedesktop.DBus",
                                  "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", name])
        return r?.stdout.contains("true") == true
    }

    /// Runs JavaScript in the shell (unsafe mode) and returns its JSON answer.
    func eval(_ script: String) throws -> Any? {
        let r = try Harness.run(["gdbus", "call", "--address", busAddress, "--dest", "org.gnome.Shell", "--object-path",
                                 "/org/gnome/Shell", "--method", "org.gnome.Shell.Eval", script])
        // The answer is GVariant text: (true, '<json>').
        guard r.status == 0, r.stdout.hasPrefix("(true, '"), let end = r.stdout.range(of: "')", options: .backwards) else {
            return nil
        }
        let json = r.stdout[r.stdout.index(r.stdout.startIndex, offsetBy: 8)..<end.lowerBound]
            .replacingOccurrences(of: "\\'", with: "'").replacingOccurrences(of: "\\\\", with: "\\")
        return try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
    }

    /// Our notifications in the message tray: the banner on screen and the list behind it.
    func shown() -> [ShownToast] {
        let script = """
            Main.messageTray.getSources().filter(s => s.title === 'Lifeline').flatMap(s => s.notifications)
              .map(n => ({ summary: n.title, body: n.bannerBodyText, buttons: n.actions.map(a => a.label) }))
            """
        guard let list = (try? eval(script)) as? [[String: Any]] else { return [] }
        return list.map { ShownToast(summary: $0["summary"] as? String ?? "", body: $0["body"] as? String ?? "",
                                     buttons: $0["buttons"] as? [String] ?? []) }
    }

    /// Clicks the banner's button when the banner is up; otherwise the action
    /// as the message list's button would run it. Only once the shell's
    /// notification service has answered every Notify: the shell lists a toast
    /// before that service has answered the daemon, and an action picked in
    /// between is dropped there (it passes actions on only to the sender of an
    /// id it has answered), so the daemon would never hear of it.
    func pick(_ label: String) async throws -> Bool {
        let quoted = label.replacingOccurrences(of: "'", with: "\\'")
        await Harness.waitUntil("the shell's notification service to answer every Notify") { everyNotifyAnswered() }
        let script = """
            (() => {
              const b = Main.messageTray._banner;
              const button = b && b._buttonBox ? b._buttonBox.get_children().find(c => c.label === '\(quoted)') : null;
              if (button) { button.emit('clicked', 1); return 'banner'; }
              const s = Main.messageTray.getSources().find(s => s.title === 'Lifeline');
              const n = s ? s.notifications[s.notifications.length - 1] : null;
              const a = n ? n.actions.find(a => a.label === '\(quoted)') : null;
              if (!a) return 'none';
              a.callback();
              n.destroy();
              return 'list';
            })()
            """
        let how = try eval(script) as? String
        return how == "banner" || how == "list"
    }

    /// Whether every Notify sent to the notification service has its answer, in
    /// dbus-monitor's header lines: a call's sender and serial, an answer's (or
    /// error's) destination and reply_serial.
    private func everyNotifyAnswered() -> Bool {
        let text = (try? String(contentsOf: root.appendingPathComponent("answers.log"), encoding: .utf8)) ?? ""
        var asked = Set<String>(), answered = Set<String>()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            func field(_ name: String) -> String? { fields.first { $0.hasPrefix("\(name)=") }.map { String($0.dropFirst(name.count + 1)) } }
            if line.hasPrefix("method call "), line.hasSuffix("member=Notify"), let sender = field("sender"), let serial = field("serial") {
                asked.insert("\(sender) \(serial)")
            } else if line.hasPrefix("method return ") || line.hasPrefix("error "),
                      let destination = field("destination"), let serial = field("reply_serial") {
                answered.insert("\(destination) \(serial)")
            }
        }
        return asked.isSubset(of: answered)
    }

    /// Waits (bounded) until the banner shows `summary`, fully in (the tray's SHOWN state).
    func screenshot(named name: String, showing summary: String) async throws -> URL {
        let quoted = summary.replacingOccurrences(of: "'", with: "\\'")
        await Harness.waitUntil("the banner '\(summary)' on screen") {
            (try? self.eval("Main.messageTray._notificationState === 2 && Main.messageTray._notification?.title === '\(quoted)'")) as? Bool == true
        }
        let dir = try Artifacts.createdFolder()
        let own = root.appendingPathComponent("shot.png")
        let r = try Harness.run(["gdbus", "call", "--address", busAddress, "--dest", "org.gnome.Shell.Screenshot", "--object-path",
                                 "/org/gnome/Shell/Screenshot", "--method", "org.gnome.Shell.Screenshot.Screenshot",
                                 "false", "false", own.path])
        #expect(r.status == 0, "Screenshot: \(r.stderr)")
        let file = dir.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: file)
        try FileManager.default.copyItem(at: own, to: file)
        return file
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }
}

/// KDE Plasma's notification server: plasmashell on Xvfb (`PlasmaDesktop`). It
/// tells no one what its popups say: the test reads that from the Notify calls
/// and the pictures, counts the popups on screen, and clicks their buttons.
final class PlasmaToastScreen: ToastScreen, @unchecked Sendable {
    let desktop: PlasmaDesktop
    /// The screen as last taken: the next picture must differ from it.
    private var lastShot: URL?

    init() throws { desktop = try PlasmaDesktop() }

    func start() async throws {
        try await desktop.start()
        let empty = desktop.root.appendingPathComponent("empty.png")
        try FileManager.default.moveItem(at: try desktop.screenshot(named: "toast-plasma-empty.png"), to: empty)
        lastShot = empty
    }

    var serverName: String { "Plasma" }
    var environment: [String: String] { desktop.environment }
    var serverIsRunning: Bool { desktop.shellIsRunning }

    func shown() -> [ShownToast] {
        Array(repeating: ShownToast(summary: "?", body: "?", buttons: []), count: desktop.popups.count)
    }

    /// Plasma draws the actions as buttons along the popup's bottom, aligned
    /// right: "Mute for 1 hour" last, "Check now" (≈ 165 px from the edge) before it.
    func pick(_ label: String) async throws -> Bool {
        let fromRight: Int
        switch label {
        case "Check now": fromRight = 165
        case "Mute for 1 hour": fromRight = 64
        default: return false
        }
        guard let popup = desktop.drawnPopup() else { return false }
        try desktop.click(popup, fromRight: fromRight, fromBottom: 20)
        return true
    }

    func screenshot(named name: String, showing summary: String) async throws -> URL {
        let shot = try await desktop.settledScreenshot(named: name, unlike: lastShot)
        let kept = desktop.root.appendingPathComponent("last-shown.png")
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.copyItem(at: shot, to: kept)
        lastShot = kept
        return shot
    }
}
