import Foundation
import LifelineTestKit
import Testing

/// KDE Plasma 5.27 on Xvfb, as the user `nobody`: plasmashell (the desktop, its
/// panel with the system tray, and its notification server) on a session bus of
/// its own that both `nobody` and the (root) daemon may join.
///
/// The bus starts nothing: plasmashell would have it start the activity manager
/// and kded5, which outlive their bus, so the desktop starts them itself and
/// stops every one. plasmashell aborts without the activity manager.
final class PlasmaDesktop: @unchecked Sendable {
    static let activityManager = "/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd"
    static let tools = ["Xvfb", "plasmashell", "kded5", "dbus-daemon", "setpriv", "gdbus",
                        "xwininfo", "xprop", "xdotool", "import", "compare"]

    /// What Plasma needs here: root (to run it as `nobody`), its programs and the activity manager.
    static func requirement(_ more: [String] = []) -> Harness.Requirement {
        .all(.rootAnd(tools + more), Harness.Requirement {
            FileManager.default.isExecutableFile(atPath: activityManager) ? nil : "missing \(activityManager)"
        })
    }
    static let user = "nobody"
    static let group = "nogroup"
    static let screen = (width: 1280, height: 800)

    let root: URL
    let busAddress: String
    let display: String
    private var processes: [Spawned] = []
    private var shell: Spawned?

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-plasma-\(UUID().uuidString.prefix(8))")
        let runtime = root.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        busAddress = "unix:path=\(root.appendingPathComponent("bus").path)"
        try SharedBus.writeConfig(to: root.appendingPathComponent("bus.conf"), address: busAddress, user: Self.user)
        _ = try Harness.run(["chown", "-R", "\(Self.user):\(Self.group)", root.path])
        chmod(runtime.path, 0o700)
        // A display number nobody uses (an X server leaves /tmp/.X11-unix/X<n>).
        var n = 200 + Int(getpid() % 50)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { n += 1 }
        display = ":\(n)"
    }

    private func asUser(_ argv: [String]) -> [String] {
        let env = ["PATH=/usr/bin:/bin", "HOME=\(root.path)", "XDG_RUNTIME_DIR=\(root.appendingPathComponent("run").path)",
                   "DBUS_SESSION_BUS_ADDRESS=\(busAddress)", "DISPLAY=\(display)", "QT_QPA_PLATFORM=xcb", "NO_AT_BRIDGE=1"]
        return ["setpriv", "--reuid=\(Self.user)", "--regid=\(Self.group)", "--clear-groups", "env", "-i"] + env + argv
    }

    private func launch(_ argv: [String], log: String, asUser: Bool = true) throws -> Spawned {
        let p = try Spawned(asUser ? self.asUser(argv) : argv,
                            stdout: .file(root.appendingPathComponent("\(log).log").path), stderr: .stdout)
        processes.append(p)
        return p
    }

    /// Starts the desktop and waits (bounded) until plasmashell owns
    /// org.freedesktop.Notifications and its panel is on screen.
    func start() async throws {
        _ = try launch(["Xvfb", display, "-screen", "0", "\(Self.screen.width)x\(Self.screen.height)x24", "-nolisten", "tcp"],
                       log: "xvfb", asUser: false)
        _ = try launch(["dbus-daemon", "--config-file=\(root.appendingPathComponent("bus.conf").path)", "--nofork", "--nopidfile"],
                       log: "bus")
        await Harness.waitUntil("Xvfb on \(display)") {
            (try? Harness.run(["xwininfo", "-root", "-display", self.display]).status) == 0
        }
        try LogindMock.waitForName("org.freedesktop.DBus", on: busAddress)
        _ = try launch([Self.activityManager], log: "kactivitymanagerd")
        _ = try launch(["kded5"], log: "kded5")
        shell = try launch(["plasmashell"], log: "plasmashell")
        // A cold start takes 10–15 s on two cores shared with builds.
        if !(await Harness.waitUntil(timeout: .seconds(90), "plasmashell's notifications on the bus") {
            self.owns("org.freedesktop.Notifications") && self.panel != nil
        }) {
            throw WaylandTray.StartFailure(description: "plasmashell did not start:\n\(logs)")
        }
        // The panel is mapped some seconds before it is drawn, and its applets
        // come one by one: it is ready when drawn and alike half a second apart.
        let strip = root.appendingPathComponent("panel.png")
        let previous = root.appendingPathComponent("panel-before.png")
        if !(await Harness.waitUntil(timeout: .seconds(60), "the panel drawn") {
            guard let panel = self.panel else { return false }
            try? FileManager.default.removeItem(at: previous)
            try? FileManager.default.moveItem(at: strip, to: previous)
            Thread.sleep(forTimeInterval: 0.5)
            let r = try? Harness.run(["import", "-display", self.display, "-window", "root", "-crop",
                                      "\(panel.width)x\(panel.height)+\(panel.x)+\(panel.y)", "+repage", strip.path])
            return r?.status == 0 && WaylandTray.colours(strip) > 2 && WaylandTray.differingPixels(previous, strip) == 0
        }) {
            throw WaylandTray.StartFailure(description: "plasmashell did not draw its panel:\n\(logs)")
        }
    }

    /// Loads kded5's status-notifier watcher, which Plasma's system tray needs to
    /// learn of any icon. kded5 loads it by itself only in a full Plasma session
    /// (`KDE_FULL_SESSION`), where it loads a dozen other modules too.
    func startTray() async throws {
        let r = try gdbus(["--dest", "org.kde.kded5", "--object-path", "/kded", "--method", "org.kde.kded5.loadModule",
                           "statusnotifierwatcher"])
        guard r.status == 0, r.stdout.contains("true") else {
            throw WaylandTray.StartFailure(description: "kded5 did not load statusnotifierwatcher: \(r.stdout) \(r.stderr)")
        }
        if !(await Harness.waitUntil(timeout: .seconds(30), "Plasma's tray registered with the watcher") {
            self.watcherProperty("IsStatusNotifierHostRegistered") == "<true>"
        }) {
            throw WaylandTray.StartFailure(description: "no tray host registered:\n\(logs)")
        }
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env["DISPLAY"] = display
        return env
    }

    var shellIsRunning: Bool { shell?.isRunning == true }

    func gdbus(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try Harness.run(["gdbus", "call", "--address", busAddress] + arguments)
    }

    func owns(_ name: String) -> Bool {
        let r = try? gdbus(["--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                            "--method", "org.freedesktop.DBus.NameHasOwner", name])
        return r?.stdout.contains("true") == true
    }

    /// A property of org.kde.StatusNotifierWatcher as GVariant text, or nil.
    func watcherProperty(_ name: String) -> String? {
        guard let r = try? gdbus(["--dest", "org.kde.StatusNotifierWatcher", "--object-path", "/StatusNotifierWatcher",
                                  "--method", "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierWatcher", name]),
              r.status == 0 else { return nil }
        // (<value>,)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst().dropLast(2).description
    }

    /// A window on screen: where it is, and its size.
    struct Window: Equatable {
        var id: String
        var x: Int, y: Int, width: Int, height: Int
    }

    /// plasmashell's mapped top-level windows whose type is `type` (an X11 atom's name).
    func windows(ofType type: String) -> [Window] {
        guard let tree = try? Harness.run(["xwininfo", "-root", "-children", "-display", display]).stdout else { return [] }
        let ids = tree.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("0x") && $0.contains("(\"plasmashell\"") }.map { String($0.prefix { $0 != " " }) }
        return ids.compactMap { id in
            guard let types = try? Harness.run(["xprop", "-display", display, "-id", id, "_NET_WM_WINDOW_TYPE"]).stdout,
                  types.contains(type),
                  let info = try? Harness.run(["xwininfo", "-id", id, "-display", display]).stdout,
                  info.contains("IsViewable") else { return nil }
            func value(_ key: String) -> Int? {
                info.split(separator: "\n").first { $0.contains(key) }.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            }
            guard let x = value("Absolute upper-left X"), let y = value("Absolute upper-left Y"),
                  let width = value("Width"), let height = value("Height") else { return nil }
            return Window(id: id, x: x, y: y, width: width, height: height)
        }
    }

    /// The notification popups on screen (a critical one has a type of its own, beside the usual).
    var popups: [Window] { windows(ofType: "_NET_WM_WINDOW_TYPE_NOTIFICATION") }

    /// The panel along the bottom of the screen; its system tray is at its right end.
    var panel: Window? { windows(ofType: "_NET_WM_WINDOW_TYPE_DOCK").first { $0.width == Self.screen.width } }

    /// The popup once it is alone, drawn and in place: Plasma maps a popup some
    /// time before it draws it, slides it in, and slides the others up while the
    /// one before (a "Back online") goes; a click before then is lost or lands on
    /// another. Alike twice, 200 ms apart, in place and picture (bounded: 20 s).
    func drawnPopup() -> Window? {
        let picture = root.appendingPathComponent("popup.png"), previous = root.appendingPathComponent("popup-before.png")
        var last: Window?
        for _ in 0..<100 {
            try? FileManager.default.removeItem(at: previous)
            try? FileManager.default.moveItem(at: picture, to: previous)
            Thread.sleep(forTimeInterval: 0.2)
            let all = popups
            guard all.count == 1, let now = all.first,
                  (try? Harness.run(["import", "-display", display, "-window", "root", "-crop",
                                     "\(now.width)x\(now.height)+\(now.x)+\(now.y)", "+repage", picture.path]).status) == 0
            else { continue }
            defer { last = now }
            if now == last, WaylandTray.colours(picture) > 16, WaylandTray.differingPixels(previous, picture) == 0 { return now }
        }
        Issue.record("no popup drawn and in place: \(popups)")
        return nil
    }

    /// Clicks at a point of `window`, measured from its bottom-right corner, as a user would.
    func click(_ window: Window, fromRight: Int, fromBottom: Int) throws {
        let r = try Harness.run(["xdotool", "mousemove", "\(window.x + window.width - fromRight)",
                                 "\(window.y + window.height - fromBottom)", "click", "1"], environment: environment)
        #expect(r.status == 0, "xdotool: \(r.stderr)")
    }

    /// The whole screen, under `artifacts/`.
    func screenshot(named name: String) throws -> URL {
        try Artifacts.screenshot(display: display, named: name)
    }

    /// Taken again (bounded) until it differs from `unlike` and two in a row are
    /// alike: Plasma draws a popup some time after mapping it, and slides it in.
    func settledScreenshot(named name: String, unlike: URL?) async throws -> URL {
        let previous = root.appendingPathComponent("previous.png")
        var shot = try screenshot(named: name)
        await Harness.waitUntil(timeout: .seconds(20), "\(name) drawn and settled") {
            try? FileManager.default.removeItem(at: previous)
            try? FileManager.default.copyItem(at: shot, to: previous)
            Thread.sleep(forTimeInterval: 0.2)
            guard let next = try? screenshot(named: name) else { return false }
            shot = next
            return WaylandTray.differingPixels(previous, shot) == 0 && unlike.map { WaylandTray.differingPixels($0, shot) > 100 } != false
        }
        return shot
    }

    var logs: String {
        ["plasmashell.log", "kded5.log", "kactivitymanagerd.log", "bus.log"].map { name in
            "== \(name)\n" + ((try? String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)) ?? "").suffix(3000)
        }.joined(separator: "\n")
    }

    deinit {
        // Xvfb, started first, gets SIGTERM: killed, it would leave its lock
        // file and socket in /tmp for good.
        for p in processes.dropFirst().reversed() { p.kill() }
        processes.first?.stop()
        // plasmashell's KIO workers run in sessions of their own; they leave once
        // plasmashell has gone, and are stopped here if they have not.
        for pid in Self.processes(mentioning: root.path) { Glibc.kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(at: root)
    }

    /// Processes whose command line names `text` (the desktop's own folder).
    static func processes(mentioning text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(text)
        }
    }
}
