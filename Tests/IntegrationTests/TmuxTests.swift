import Foundation
import LifelinePlatform
import LifelineTestKit
import Testing

/// The tmux sink and `lifeline watch` against real tmux servers on private
/// sockets. Each inner server's client is attached inside an outer tmux, so its
/// status line is really drawn and `capture-pane` reads what a user would see.
@Suite(.serialized)
struct TmuxTests {
    static let tools = ["tmux"]

    /// Publication → status line, per server, by the push alone: the servers never
    /// redraw on a timer of their own (`status-interval 0`), so each new text on
    /// screen was pushed. How soon is the benchmark's business (bench/tmux.sh).
    @Test(.requires(.tools(TmuxTests.tools))) func statusLinesOfThreeServersChangeByPushAlone() async throws {
        let lab = try TmuxLab()
        defer { lab.killAll() }
        let daemon = try DaemonFixture(extraEnvironment: lab.daemonEnvironment)
        let names = ["in1", "in2", "in3"]
        for name in names {
            try lab.startServer(name)
            try lab.tmux(["-L", name, "set-option", "-g", "status-interval", "0"])
            try lab.attach(name)
        }
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 200, sinks: """
            [[sink]]
            kind = "tmux"
            alert = "never"
            """))
        try daemon.start()

        try monitor.say("online", interface: "eth0", reason: "test says online")
        for name in names {
            await Harness.waitUntil("\(name) shows online") { lab.statusLine(name).contains("● online") }
        }

        // What each client draws, as it draws it: the outer panes' output goes to
        // files (pipe-pane), read here without starting a process per look.
        var panes = try names.map { try PaneOutput(path: lab.pipe($0)) }
        // The recorders start in the background: wait until each has recorded a redraw.
        for (i, name) in names.enumerated() {
            await Harness.waitUntil("recorder for \(name)") {
                // Any change of the status line makes the client redraw it.
                _ = try? lab.tmux(["-L", name, "set-option", "-g", "status-left", "\(Int.random(in: 0...9))"])
                return !panes[i].read().isEmpty
            }
        }
        for (state, text) in [("offline", "○ offline"), ("online", "● online"), ("limited", "◐ limited")] {
            for i in panes.indices { _ = panes[i].read() }
            try monitor.say(state, interface: "eth0", reason: "test says \(state)")
            var seen = [Int64?](repeating: nil, count: names.count)
            var raw = [[UInt8]](repeating: [], count: names.count)
            var drawn = [String](repeating: "", count: names.count)
            var written: Int64?  // when the daemon replaced the state file with `state`
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while seen.contains(nil) || written == nil, clock.now < deadline {
                for i in panes.indices where seen[i] == nil {
                    for chunk in panes[i].read() where seen[i] == nil {
                        raw[i] += chunk.bytes
                        drawn[i] = PaneOutput.text(raw[i])
                        if drawn[i].contains(text) { seen[i] = chunk.at }
                    }
                }
                if written == nil { written = Self.modified(daemon.stateFilePath, holding: state) }
                try await Task.sleep(for: .milliseconds(1))
            }
            // Publication, as the daemon's own state-file sink saw it. The bus's
            // schedule (`since` + debounce) is shown too: on a starved machine the
            // debounce timer itself fires late, which is no part of the push.
            let publication = try #require(written, "state file never held \(state)")
            let record = try #require(try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: daemon.stateFilePath))) as? [String: Any])
            #expect(record["state"] as? String == state)
            let scheduled = (record["since"] as! NSNumber).int64Value + 200_000
            for (i, name) in names.enumerated() {
                let at = try #require(seen[i], "\(name) never drew '\(text)': \(drawn[i].suffix(200))")
                print("TmuxTests: \(name) drew '\(text)' \(Double(at - publication) / 1000) ms after the state file changed, "
                      + "\(Double(at - scheduled) / 1000) ms after since + debounce")
                #expect(lab.statusLine(name).contains(text))
            }
        }
        #expect(try lab.option("in2") == "#[fg=colour208]◐ limited#[fg=default]")
        await daemon.stop()
    }

    /// The state file's modification time (µs since the epoch) if it holds `state`.
    static func modified(_ path: String, holding state: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0,
              let text = try? String(contentsOfFile: path, encoding: .utf8),
              text.contains("\"state\":\"\(state)\"")
        else { return nil }
        return Int64(st.st_mtim.tv_sec) * 1_000_000 + Int64(st.st_mtim.tv_nsec) / 1000
    }

    /// A server started after the daemon gets the value with no change of state
    /// to carry it (the socket folder is watched: nothing else would serve it; how
    /// soon is bench/tmux-servers.sh's business); a socket left by a dead server
    /// is skipped without a word; a restarted server is served again.
    @Test(.requires(.tools(TmuxTests.tools))) func lateAndRestartedServersGetTheValueAndDeadSocketsAreSkipped() async throws {
        let lab = try TmuxLab()
        defer { lab.killAll() }
        let daemon = try DaemonFixture(extraEnvironment: lab.daemonEnvironment)
        let dead = try lab.makeDeadSocket("dead")
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 100, sinks: """
            [[sink]]
            kind = "tmux"
            format = "{state} via {interface}"
            colors = false
            """))
        try daemon.start()
        try monitor.say("online", interface: "eth#(touch pwned)", reason: "test says online")
        await Harness.waitUntil("daemon online") { (try? daemon.cli(["status"]).status) == 0 }

        // Field values are literal: `#` doubled, nothing run by tmux.
        let expected = "online via eth##(touch pwned)"
        // From the moment the new server's socket exists: `tmux new-session -d`
        // returns only after its server is up, later than that.
        let socket = lab.socketFolder + "/late"
        let launch = Task.detached { try lab.startServer("late") }
        await Harness.waitUntil("late server's socket") { FileManager.default.fileExists(atPath: socket) }
        let created = ContinuousClock.now
        try await launch.value
        await Harness.waitUntil("late server gets @lifeline") {
            (try? lab.option("late")) == expected
        }
        print("TmuxTests: the late server was served \(ContinuousClock.now - created) after its socket appeared")

        try await lab.killServer("late")
        try lab.startServer("late")
        await Harness.waitUntil("restarted server gets @lifeline") {
            (try? lab.option("late")) == expected
        }
        #expect(await daemon.stop() == 0)
        // A stopped daemon leaves no stale state in the status line.
        #expect((try? lab.option("late")) == "", "@lifeline still set after the daemon stopped")
        #expect(!daemon.daemonLog.contains(dead), "the dead socket was logged:\n\(daemon.daemonLog)")
        #expect(!daemon.daemonLog.contains("warning"), "\(daemon.daemonLog)")
    }

    /// Without a notification server, each outage shows one `display-message` on
    /// attached clients: not again when the state changes within the outage.
    @Test(.requires(.tools(TmuxTests.tools))) func displayMessageOncePerOutageWithoutNotificationServer() async throws {
        let lab = try TmuxLab()
        defer { lab.killAll() }
        var environment = lab.daemonEnvironment
        // A session bus that does not exist: no notification server can answer.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(lab.root)/no-bus"
        environment["DISPLAY"] = ""
        let daemon = try DaemonFixture(extraEnvironment: environment)
        try lab.startServer("in1")
        try lab.attach("in1")
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 100, sinks: """
            [[sink]]
            kind = "tmux"
            alert = "auto"
            alert_duration = "300ms"
            """))
        try daemon.start()

        try monitor.say("online", interface: "eth0", reason: "test says online")
        await Harness.waitUntil("online shown") { lab.statusLine("in1").contains("● online") }
        #expect(lab.alerts("in1").isEmpty)

        try monitor.say("offline", interface: "eth0", reason: "test says offline")
        await Harness.waitUntil("the alert") { lab.alerts("in1").count == 1 }
        #expect(lab.alerts("in1").first?.contains("Lifeline: offline") == true)
        await Harness.waitUntil("the alert shown on the status line") {
            lab.statusLine("in1").contains("Lifeline: offline") || lab.alerts("in1").count == 1
        }

        try monitor.say("limited", interface: "eth0", reason: "test says limited")  // same outage
        await Harness.waitUntil("limited") { (try? lab.option("in1"))?.contains("limited") == true }
        try monitor.say("online", interface: "eth0", reason: "test says online")  // outage over
        await Harness.waitUntil("online") { (try? lab.option("in1"))?.contains("online") == true }
        try monitor.say("offline", interface: "eth0", reason: "test says offline")  // a new outage
        await Harness.waitUntil("the second alert") { lab.alerts("in1").count >= 2 }
        // The sink handles updates in order: had `limited` alerted, it would be here by now.
        let alerts = lab.alerts("in1")
        #expect(alerts.count == 2, "\(alerts)")
        #expect(alerts.allSatisfy { $0.contains("Lifeline: offline") }, "\(alerts)")
        await daemon.stop()
    }

    /// Hostile reasons from an exec monitor, through the real daemon, as tmux has
    /// and shows them: the `@lifeline` value (`show-option`), the client's status
    /// line and the `display-message` alert show each literally; no command runs,
    /// no format or strftime expands. `lifeline status` prints the same reason.
    @Test(.requires(.tools(TmuxTests.tools))) func hostileReasonsAreShownLiterallyByTmux() async throws {
        let lab = try TmuxLab()
        defer { lab.killAll() }
        let daemon = try DaemonFixture(extraEnvironment: lab.daemonEnvironment)
        try lab.startServer("esc")
        try lab.attach("esc")
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "tmux"
            format = "{reason}"
            colors = false
            alert = "always"
            alert_duration = "1s"
            """))
        try daemon.start()
        let pwned = lab.root + "/pwned"
        // (the monitor's JSON string, the option tmux holds, what a client shows,
        // what `status --format {reason}` prints). Control characters become spaces
        // where the monitor's text enters the daemon.
        let cases: [(json: [UInt8], option: String, shown: String, alert: String)] = [
            (Array("<b>x</b> a&b".utf8), "<b>x</b> a&b", "<b>x</b> a&b", "<b>x</b> a&b"),
            (Array(#"<a href=\"https://phish/\">x</a>"#.utf8), #"<a href="https://phish/">x</a>"#,
             #"<a href="https://phish/">x</a>"#, #"<a href="https://phish/">x</a>"#),
            (Array("#(touch \(pwned))".utf8), "##(touch \(pwned))", "#(touch \(pwned))", "#(touch \(pwned))"),
            (Array("#{pane_id} #[fg=red]red".utf8), "##{pane_id} ##[fg=red]red", "#{pane_id} #[fg=red]red",
             "#{pane_id} #[fg=red]red"),
            (Array("%Y %s 100%".utf8), "%Y %s 100%", "%Y %s 100%", "%Y %s 100%"),
            (Array(#"\u001b]0;title\u0007 \u001b[2J"#.utf8), " ]0;title   [2J", " ]0;title   [2J", " ]0;title   [2J"),
            (Array("caf".utf8) + [0xC3, 0x28, 0xFF], "caf\u{FFFD}(\u{FFFD}", "caf\u{FFFD}(\u{FFFD}", "caf\u{FFFD}(\u{FFFD}"),
            (Array("ends in ;".utf8), "ends in ;", "ends in ;", "ends in ;"),
        ]
        for (n, c) in cases.enumerated() {
            try monitor.say(line: Array(#"{"state":"online","interface":"eth0","reason":"fine \#(n)"}"#.utf8) + [0x0A])
            await Harness.waitUntil("online \(n)") { (try? lab.option("esc")) == "fine \(n)" }
            try monitor.say(line: Array(#"{"state":"offline","interface":"eth0","reason":""#.utf8) + c.json
                                  + Array(#""}"#.utf8) + [0x0A])
            await Harness.waitUntil("@lifeline for case \(n)") { (try? lab.option("esc")) == c.option }
            #expect(try lab.option("esc") == c.option, "case \(n)")
            // Offline has no primary interface: the alert names none.
            let message = "Lifeline: offline — " + c.alert
            await Harness.waitUntil("alert for case \(n)") { lab.statusLine("esc").contains(message) }
            #expect(lab.statusLine("esc").contains(message), "case \(n): \(lab.statusLine("esc"))")
            // The alert goes after a second; then the status line shows the value.
            await Harness.waitUntil("status line for case \(n)") { lab.statusLine("esc").hasSuffix(c.shown) }
            #expect(lab.statusLine("esc").hasSuffix(c.shown), "case \(n): \(lab.statusLine("esc"))")
            let status = try daemon.cli(["status", "--format", "{reason}"])
            #expect(status.stdout == c.alert + "\n", "case \(n)")
        }
        #expect(!FileManager.default.fileExists(atPath: pwned), "tmux ran a command from a reason")
        await daemon.stop()
    }

    /// The TPM plugin puts `#{@lifeline}` where `@lifeline_position` says, once.
    @Test(.requires(.tools(TmuxTests.tools))) func tpmPluginPlacesTheOptionOnce() async throws {
        let lab = try TmuxLab()
        defer { lab.killAll() }
        try lab.startServer("tpm", statusLine: false)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("packaging/tmux/lifeline.tmux").path
        func option(_ name: String) throws -> String {
            let out = try lab.tmux(["-L", "tpm", "show-options", "-gv", name]).stdout
            return out.hasSuffix("\n") ? String(out.dropLast()) : out
        }
        func plugin() throws {
            let r = try lab.tmux(["-L", "tpm", "run-shell", script])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let right = try option("status-right"), left = try option("status-left")
        try plugin()  // no position set: nothing changes
        #expect(try option("status-right") == right)
        #expect(try option("status-left") == left)

        try lab.tmux(["-L", "tpm", "set-option", "-g", "@lifeline_position", "right"])
        try plugin()
        try plugin()
        #expect(try option("status-right") == "#{@lifeline} " + right)

        try lab.tmux(["-L", "tpm", "set-option", "-g", "@lifeline_position", "left"])
        try plugin()
        try plugin()
        #expect(try option("status-left") == left + " #{@lifeline} ")
    }

    /// `watch --format waybar`: one JSON object per line, `class` = the state;
    /// `--format i3bar`: header, `[`, then one array of blocks per line.
    @Test(.requires(.tools(TmuxTests.tools))) func watchPrintsWaybarAndI3barLines() async throws {
        let daemon = try DaemonFixture()
        let monitor = ScriptedNetwork(fixture: daemon)
        try daemon.writeConfig(monitor.config(debounceMs: 100, sinks: ""))
        // Started before the daemon: a bar starts with the session, maybe first.
        let waybar = try LineReader(daemon, ["watch", "--format", "waybar"])
        let i3bar = try LineReader(daemon, ["watch", "--format", "i3bar"])
        defer {
            waybar.stop()
            i3bar.stop()
        }
        await Harness.waitUntil("first waybar line") { !waybar.lines.isEmpty }
        try daemon.start()
        for state in ["online", "offline", "online"] {
            try monitor.say(state, interface: "eth0", reason: "test says \(state)")
            await Harness.waitUntil("\(state) in the log") { daemon.loggedStates().last == state }
        }
        let expectedTail = ["online", "offline", "online"]
        func classes() -> [String] {
            waybar.lines.compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["class"] as? String
            }
        }
        await Harness.waitUntil("waybar shows every change") { Array(classes().suffix(3)) == expectedTail }

        let lines = waybar.lines
        #expect(classes().first == "unknown", "before the daemon: \(lines)")
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            for key in ["text", "tooltip", "class", "alt"] { #expect(object[key] is String, "\(key) in \(line)") }
            #expect(object["alt"] as? String == object["class"] as? String)
        }
        #expect(lines.contains { $0.contains(#""text":"○ offline""#) }, "\(lines)")

        await Harness.waitUntil("i3bar shows every change") { i3bar.lines.count >= 2 + 4 }
        let bar = i3bar.lines
        try #require(bar.count >= 2)
        let header = try #require(try JSONSerialization.jsonObject(with: Data(bar[0].utf8)) as? [String: Any])
        #expect(header["version"] as? Int == 1)
        #expect(bar[1] == "[")
        var texts: [String] = []
        for line in bar.dropFirst(2) {
            #expect(line.hasSuffix(","), "\(line)")
            let blocks = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast().utf8)) as? [[String: Any]], "\(line)")
            #expect(blocks.count == 1)
            let block = try #require(blocks.first)
            #expect((block["color"] as? String)?.hasPrefix("#") == true, "\(line)")
            texts.append(try #require(block["full_text"] as? String, "\(line)"))
        }
        #expect(Array(texts.suffix(3)) == ["● online", "○ offline", "● online"], "\(texts)")
        // The stream so far plus a closing element is one valid JSON array.
        let stream = bar.dropFirst().joined(separator: "\n") + "[]]"
        #expect((try? JSONSerialization.jsonObject(with: Data(stream.utf8))) is [Any])
        await daemon.stop()
    }
}

// MARK: - Helpers

/// Private tmux servers: inner ones in a private TMUX_TMPDIR (where the daemon
/// looks), each shown by a client running in a window of one outer server on a
/// socket outside that folder. Kills every server it started.
final class TmuxLab: @unchecked Sendable {
    let root: String
    let tmpdir: String
    let outerSocket: String
    let environment: [String: String]
    private var servers: [String] = []
    private var outerStarted = false

    /// A short path of its own: socket paths must fit in 108 bytes.
    init() throws {
        root = "/tmp/lifeline-tmux-\(UUID().uuidString.prefix(8))"
        tmpdir = root + "/t"
        outerSocket = root + "/outer.sock"
        try FileManager.default.createDirectory(atPath: tmpdir, withIntermediateDirectories: true)
        var env = ProcessInfo.processInfo.environment
        env["TMUX_TMPDIR"] = tmpdir
        env["TMUX"] = nil
        env["TMUX_PANE"] = nil
        environment = env
    }

    /// What the daemon needs to find these servers.
    var daemonEnvironment: [String: String] { ["TMUX_TMPDIR": tmpdir] }

    /// The folder tmux uses for `-L` sockets.
    var socketFolder: String { "\(tmpdir)/tmux-\(getuid())" }

    /// Runs tmux to completion. Its output is captured in files (a pipe would be
    /// inherited by a server that tmux starts and never reach end of file), and it
    /// starts with SIGHUP/SIGTERM at their defaults, so a server and its panes exit
    /// on kill-server.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try Harness.run(["tmux"] + arguments, environment: environment)
    }

    func startServer(_ name: String, statusLine: Bool = true) throws {
        servers.append(name)
        let r = try tmux(["-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "100", "-y", "8", "sleep infinity"])
        guard r.status == 0 else { throw Failure("tmux -L \(name) new-session: \(r.stderr)") }
        guard statusLine else { return }
        try tmux(["-L", name, "set-option", "-g", "status-left", ""])
        try tmux(["-L", name, "set-option", "-g", "status-right", "#{@lifeline}"])
        try tmux(["-L", name, "set-option", "-g", "status-right-length", "90"])
    }

    /// A client of `name` in a window of the outer server, so its status line is drawn.
    func attach(_ name: String) throws {
        let command = "TMUX= exec tmux -L \(name) attach"
        let r = outerStarted
            ? try tmux(["-S", outerSocket, "new-session", "-d", "-s", name, "-x", "100", "-y", "8", command])
            : try tmux(["-S", outerSocket, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "100", "-y", "8", command])
        guard r.status == 0 else { throw Failure("outer new-session: \(r.stderr)") }
        if !outerStarted {
            outerStarted = true
            try tmux(["-S", outerSocket, "set-option", "-g", "status", "off"])
            // Keeps the outer server up whatever its other windows do.
            try tmux(["-S", outerSocket, "new-session", "-d", "-s", "keep", "sleep infinity"])
        }
    }

    /// The bottom line of the outer window showing `name`: the inner status line.
    func statusLine(_ name: String) -> String {
        guard let r = try? tmux(["-S", outerSocket, "capture-pane", "-p", "-t", "\(name):"]), r.status == 0 else { return "" }
        return r.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().last.map(String.init) ?? ""
    }

    /// Records everything the outer window showing `name` receives, chunk by chunk,
    /// each stamped with the wall-clock time it arrived (`µs hex` per line). The
    /// stamp is taken by the recorder, not by the test, whose threads may be busy.
    func pipe(_ name: String) throws -> String {
        let path = "\(root)/pipe.\(name)"
        let recorder = "\(root)/recorder.py"
        try """
            import os, sys, time
            while True:
                data = os.read(0, 65536)
                if not data:
                    break
                sys.stdout.write("%d %s\\n" % (time.time_ns() // 1000, data.hex()))
                sys.stdout.flush()
            """.write(toFile: recorder, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let r = try tmux(["-S", outerSocket, "pipe-pane", "-o", "-t", "\(name):", "exec python3 '\(recorder)' >> '\(path)'"])
        guard r.status == 0 else { throw Failure("pipe-pane: \(r.stderr)") }
        return path
    }

    func option(_ name: String) throws -> String {
        let r = try tmux(["-L", name, "show-options", "-gv", "@lifeline"])
        return r.stdout.hasSuffix("\n") ? String(r.stdout.dropLast()) : r.stdout
    }

    /// Messages `display-message` put on clients of `name` (tmux keeps a log of them).
    func alerts(_ name: String) -> [String] {
        guard let r = try? tmux(["-L", name, "show-messages"]) else { return [] }
        return r.stdout.split(separator: "\n").map(String.init).filter { $0.contains(" message: Lifeline:") }
    }

    /// Kills a server and waits (bounded) until it no longer answers.
    func killServer(_ name: String) async throws {
        try tmux(["-L", name, "kill-server"])
        await Harness.waitUntil("server \(name) gone") { (try? tmux(["-L", name, "has-session"]).status) != 0 }
    }

    /// A socket file nobody listens on, as a killed server leaves behind.
    func makeDeadSocket(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let path = socketFolder + "/" + name
        let fd = socket(AF_UNIX, SocketConstants.stream, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)
        guard bound == 0 else { throw Failure("bind \(path): errno \(errno)") }
        return path
    }

    func killAll() {
        for name in servers { _ = try? tmux(["-L", name, "kill-server"]) }
        if outerStarted { _ = try? tmux(["-S", outerSocket, "kill-server"]) }
        try? FileManager.default.removeItem(atPath: root)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }
}

/// A recorder's file (see `TmuxLab.pipe`) read as it grows: terminal output in
/// arrival order with arrival times; `text` is what a terminal would show.
struct PaneOutput {
    let path: String
    private var offset = 0
    private var pending = ""

    init(path: String) { self.path = path }

    /// New chunks since the last call: (arrival µs since the epoch, raw bytes).
    mutating func read() -> [(at: Int64, bytes: [UInt8])] {
        guard let data = FileManager.default.contents(atPath: path), data.count > offset else { return [] }
        pending += String(decoding: data[offset...], as: UTF8.self)
        offset = data.count
        var chunks: [(Int64, [UInt8])] = []
        while let newline = pending.firstIndex(of: "\n") {
            let line = pending[..<newline]
            pending = String(pending[pending.index(after: newline)...])
            let parts = line.split(separator: " ")
            guard parts.count == 2, let at = Int64(parts[0]) else { continue }
            var bytes: [UInt8] = []
            var hex = parts[1].makeIterator()
            while let hi = hex.next(), let lo = hex.next(), let b = UInt8(String([hi, lo]), radix: 16) { bytes.append(b) }
            chunks.append((at, bytes))
        }
        return chunks
    }

    /// Drops CSI (`ESC [ … final`), charset (`ESC ( x`) and other two-byte escapes, and control bytes.
    static func text(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x1B, i + 1 < bytes.count {
                let next = bytes[i + 1]
                if next == UInt8(ascii: "[") {
                    i += 2
                    while i < bytes.count, !(0x40...0x7E).contains(bytes[i]) { i += 1 }
                    i += 1
                } else if next == UInt8(ascii: "(") || next == UInt8(ascii: ")") {
                    i += 3
                } else {
                    i += 2
                }
            } else {
                if b >= 0x20 || b == 0x0A { out.append(b) }
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A `lifeline` process whose standard output is collected line by line (in a
/// file, read as it grows).
final class LineReader: Sendable {
    private let process: Spawned

    init(_ daemon: DaemonFixture, _ arguments: [String]) throws {
        process = try Spawned([Harness.binary] + arguments, environment: daemon.environment, stdout: .capture)
    }

    /// The complete lines so far; a line still being written is left out.
    var lines: [String] {
        let bytes = process.capturedStdout
        guard let last = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return bytes[..<last].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    var pid: pid_t { process.pid }

    func stop() { process.stop() }
}
