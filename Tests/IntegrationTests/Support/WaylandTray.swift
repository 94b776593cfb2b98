import Foundation
import LifelineTestKit
import Testing

/// A real tray host: waybar with its `tray` module on a headless sway, both as
/// the unprivileged user `nobody` (sway refuses root), with a private session
/// bus both `nobody` and the (root) daemon may join. `grim` takes the pictures.
/// Without the bar (`screen:`), it is the sway desktop the notification servers
/// of Wayland (mako, swaync) draw on.
final class WaylandTray: @unchecked Sendable {
    static let tools = ["sway", "waybar", "grim", "dbus-daemon", "setpriv", "identify", "compare"]
    static let user = "nobody"
    static let group = "nogroup"
    /// The bar's size: the tray sits at its right end.
    static let width = 320
    static let height = 32

    let root: URL
    let busAddress: String
    private var processes: [Spawned] = []
    private(set) var waylandDisplay = ""
    /// The screen's size; nil: the bar's strip.
    let screen: (width: Int, height: Int)?

    init(screen: (width: Int, height: Int)? = nil) throws {
        self.screen = screen
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-tray-\(UUID().uuidString.prefix(8))")
        let runtime = root.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(root.path, 0o755)
        // sway wants XDG_RUNTIME_DIR its user's own, mode 0700.
        _ = try Harness.run(["chown", "\(Self.user):\(Self.group)", runtime.path])
        chmod(runtime.path, 0o700)

        let socket = root.appendingPathComponent("bus").path
        busAddress = "unix:path=\(socket)"
        let busConfig = root.appendingPathComponent("bus.conf")
        try SharedBus.writeConfig(to: busConfig, address: busAddress, user: Self.user)
        processes.append(try Spawned(["dbus-daemon", "--config-file=\(busConfig.path)", "--nofork", "--nopidfile"],
                                     stdout: .file(root.appendingPathComponent("bus.log").path), stderr: .stdout))
        try """
            output HEADLESS-1 resolution \(screen?.width ?? Self.width)x\(screen?.height ?? Self.height * 3)
            default_border none
            bar {
              swaybar_command true
            }
            """.write(to: root.appendingPathComponent("sway.conf"), atomically: true, encoding: .utf8)
        try """
            { "layer": "top", "position": "top", "height": \(Self.height), "modules-right": ["tray"],
              "tray": { "icon-size": 24, "spacing": 4, "show-passive-items": true } }
            """.write(to: root.appendingPathComponent("waybar.json"), atomically: true, encoding: .utf8)
        for name in ["sway.conf", "waybar.json"] { chmod(root.appendingPathComponent(name).path, 0o644) }
    }

    /// The environment sway, waybar and grim run with, as `nobody`.
    private func asUser(_ argv: [String], wayland: Bool, extra: [String] = []) -> [String] {
        var env = ["PATH=/usr/bin:/bin", "HOME=\(root.path)", "XDG_RUNTIME_DIR=\(root.appendingPathComponent("run").path)",
                   "DBUS_SESSION_BUS_ADDRESS=\(busAddress)", "NO_AT_BRIDGE=1", "GTK_A11Y=none"]
        if wayland { env.append("WAYLAND_DISPLAY=\(waylandDisplay)") }
        env += extra
        return ["setpriv", "--reuid=\(Self.user)", "--regid=\(Self.group)", "--clear-groups", "env", "-i"] + env + argv
    }

    /// Starts sway and waybar and waits (bounded) until waybar owns the watcher
    /// name; with `bar: false`, sway alone.
    func start(bar: Bool = true) async throws {
        let runtime = root.appendingPathComponent("run")
        await Harness.waitUntil("the bus") { FileManager.default.fileExists(atPath: self.root.appendingPathComponent("bus").path) }
        // No GPU and no seat here: the headless backend and the software renderer.
        let sway = asUser(["sway", "-c", root.appendingPathComponent("sway.conf").path], wayland: false,
                          extra: ["WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman"])
        processes.append(try Spawned(sway,
                                     stdout: .file(root.appendingPathComponent("sway.log").path), stderr: .stdout))
        let swayUp = await Harness.waitUntil("sway's socket") {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path)) ?? []
            guard let display = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }) else { return false }
            self.waylandDisplay = display
            return true
        }
        guard swayUp else {
            throw StartFailure(description: "sway did not start headless:\n\(logs)")
        }
        guard bar else { return }
        processes.append(try Spawned(asUser(["waybar", "-c", root.appendingPathComponent("waybar.json").path], wayland: true),
                                     stdout: .file(root.appendingPathComponent("waybar.log").path), stderr: .stdout))
        if !(await Harness.waitUntil("waybar's tray on the bus") { self.owns("org.kde.StatusNotifierWatcher") }) {
            throw StartFailure(description: "waybar's tray did not start:\n\(logs)")
        }
    }

    /// Starts `argv` on this desktop as its user; its output goes to `<log>.log` here.
    @discardableResult
    func launch(_ argv: [String], log: String) throws -> Spawned {
        let p = try Spawned(asUser(argv, wayland: true), stdout: .file(root.appendingPathComponent("\(log).log").path), stderr: .stdout)
        processes.append(p)
        return p
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return env
    }

    func owns(_ name: String) -> Bool {
        let r = try? Harness.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.NameHasOwner", "string:\(name)"], environment: environment)
        return r?.stdout.contains("boolean true") == true
    }

    var logs: String {
        ["sway.log", "waybar.log"].map { name in
            "== \(name)\n" + ((try? String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)) ?? "")
        }.joined(separator: "\n")
    }

    /// The whole screen (grim), kept under `artifacts/` as a test artifact.
    func screenshot(named name: String) throws -> URL {
        try grim(named: name, region: nil)
    }

    /// The tray's corner of the screen: the right end of the bar, kept beside it.
    func trayCorner(named name: String) throws -> URL {
        let width = 2 * Self.height
        return try grim(named: name, region: "\(Self.width - width),0 \(width)x\(Self.height)")
    }

    private func grim(named name: String, region: String?) throws -> URL {
        let dir = try Artifacts.createdFolder()
        let file = dir.appendingPathComponent(name)
        let r = try Spawned.run(asUser(["grim"] + (region.map { ["-g", $0] } ?? []) + ["-"], wayland: true))
        #expect(r.status == 0, "grim failed: \(String(decoding: r.stderr, as: UTF8.self))")
        try Data(r.stdout).write(to: file)
        return file
    }

    /// How many colours a picture has (1: blank).
    static func colours(_ picture: URL) -> Int {
        Int((try? Harness.run(["identify", "-format", "%k", picture.path]).stdout) ?? "") ?? 0
    }

    /// How many pixels differ between two pictures of the same size.
    static func differingPixels(_ a: URL, _ b: URL) -> Int {
        // compare prints the count on standard error and exits 1 when they differ.
        let r = try? Harness.run(["compare", "-metric", "AE", a.path, b.path, "null:"])
        return Int(Double(r?.stderr.split(separator: " ").first ?? "") ?? -1)
    }

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    deinit {
        for p in processes.reversed() { p.kill() }
        try? FileManager.default.removeItem(at: root)
    }
}
