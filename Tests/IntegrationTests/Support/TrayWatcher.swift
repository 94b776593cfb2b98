import Foundation
import LifelineTestKit
import Testing

/// A tray host's side of the StatusNotifierItem protocol on a private bus:
/// `Resources/sni_watcher.py` (Python, Gio) owns `org.kde.StatusNotifierWatcher`
/// and writes what it sees as JSON lines; the same script makes a host's calls
/// (dbusmenu's GetLayout and Event, Activate, the item's properties).
final class TrayWatcher: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Resources/sni_watcher.py").standardized.path
    /// Debian's interpreter, where python3-gi installs (a `python3` earlier on PATH may lack it).
    static let python = "/usr/bin/python3"

    /// What is missing to run a watcher here, or nil.
    static var missing: String? {
        guard let r = try? Harness.run([python, "-c", "from gi.repository import Gio"]), r.status == 0 else {
            return "\(python) with Gio (Debian's python3-gi)"
        }
        return Harness.Requirement.tools(["dbus-daemon", "tail"]).missing()
    }

    /// What the tray tests need (asked of Python once per run).
    static let requirement = Harness.Requirement { missingOnce.map { "missing \($0)" } }
    private static let missingOnce = missing

    let log: URL
    let environment: [String: String]
    private var process: Spawned?

    convenience init(bus: PrivateBus, log: URL) {
        self.init(busAddress: bus.address, log: log)
    }

    /// On another desktop's bus, where its own watcher may already run (then only `host` is used).
    init(busAddress: String, log: URL) {
        self.log = log
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        environment = env
    }

    /// Starts the watcher and waits (bounded) until it owns its name. `hang`:
    /// it stops itself on the first registration, before answering it.
    func start(hang: Bool = false) async throws {
        let before = events("ready").count
        process = try Spawned([Self.python, Self.script, "watch", log.path] + (hang ? ["--hang"] : []), environment: environment)
        await Harness.waitUntil("the watcher owns its name") { events("ready").count > before }
    }

    /// Kills the watcher (SIGCONT first, in case it stopped itself).
    func stop() {
        guard let p = process else { return }
        p.signal(SIGCONT)
        p.kill()
        process = nil
    }

    var pid: pid_t? { process?.pid }

    /// Every line the watcher wrote, parsed.
    var lines: [[String: Any]] {
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    func events(_ kind: String) -> [[String: Any]] { lines.filter { $0["event"] as? String == kind } }

    /// The item's signals, in order: member and the item's properties read right after.
    var signals: [(member: String, props: [String: Any])] {
        events("signal").compactMap { e in
            guard let member = e["member"] as? String, let props = e["props"] as? [String: Any] else { return nil }
            return (member, props)
        }
    }

    /// The unique name of the last item that registered.
    var itemName: String? { events("registered").last?["sender"] as? String }

    /// Runs one of the script's host calls (layout, click, activate, props).
    func host(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try Harness.run([Self.python, Self.script] + arguments, environment: environment)
    }

    /// The menu as the host reads it: (label, enabled, children) trees.
    func menu(of name: String, path: String) throws -> MenuNode? {
        let r = try host(["layout", name, path])
        guard r.status == 0, let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            Issue.record("GetLayout failed: \(r.stderr)")
            return nil
        }
        return MenuNode(json)
    }

    deinit { stop() }
}

/// One item of a dbusmenu layout.
struct MenuNode {
    var label: String
    var enabled: Bool
    /// A host draws no item whose `visible` is false.
    var visible: Bool
    var children: [MenuNode]

    init(_ json: [String: Any]) {
        label = json["label"] as? String ?? ""
        enabled = json["enabled"] as? Bool ?? true
        visible = json["visible"] as? Bool ?? true
        children = (json["children"] as? [[String: Any]] ?? []).map(MenuNode.init)
    }

    /// The labels a host shows.
    var labels: [String] { children.filter(\.visible).map(\.label) }

    func child(_ label: String) -> MenuNode? { children.first { $0.label == label } }
}
