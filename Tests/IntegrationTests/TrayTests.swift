import Foundation
import LifelineDBus
import Testing

/// The `tray` sink against a tray host's side of the protocol: a Python (Gio)
/// StatusNotifierWatcher on a private bus, the daemon driven by a scripted
/// monitor through online → offline → limited → online.
@Suite(.serialized) struct TrayTests {
    static let lifeline = "org.lifeline.Lifeline1"

    /// A daemon (not started) with a scripted network, a monitor that writes
    /// each check request it gets to `checks.log`, and `sinks`.
    func daemon(on environment: [String: String], sinks: [String]) throws -> (DaemonFixture, ScriptedNetwork, String) {
        let fixture = try DaemonFixture(extraEnvironment: environment)
        let net = ScriptedNetwork(fixture: fixture)
        let checks = fixture.path("checks.log")
        let checker = try fixture.writeScript("checker", "#!/bin/sh\nwhile read -r line; do echo \"$line\" >> '\(checks)'; done\n")
        try fixture.writeConfig(net.config(debounceMs: 0, sinks: sinks.map { "[[sink]]\nkind = \"\($0)\"" }.joined(separator: "\n")) + """

            [[monitor]]
            kind = "exec"
            command = ["\(checker)"]
            checks = true
            """)
        return (fixture, net, checks)
    }

    @Test(.requires(TrayWatcher.requirement)) func aWatcherSeesTheIconChangeAndUsesItsMenu() async throws {
        let bus = try PrivateBus()
        let (fixture, net, checks) = try daemon(on: bus.environment, sinks: ["tray", "log", "dbus"])
        defer { fixture.stopNow() }
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()

        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        let props = try #require(try JSONSerialization.jsonObject(with: Data(watcher.host(["props", name]).stdout.utf8)) as? [String: Any])
        #expect(props["Category"] as? String == "SystemServices")
        #expect(props["Id"] as? String == "lifeline")
        #expect(props["Title"] as? String == "Lifeline")
        #expect(props["ItemIsMenu"] as? Bool == false)
        let menuPath = try #require(props["Menu"] as? String)

        // Each transition: the three signals, and what the host then reads.
        let steps: [(state: String, interface: String, reason: String, icon: String, status: String, heading: String)] = [
            ("online", "eth0", "", "network-transmit-receive", "Passive", "Online"),
            ("offline", "", "cable pulled", "network-offline", "NeedsAttention", "Offline"),
            ("limited", "eth0", "no answer from the check server", "network-error", "Active", "Connected, but no internet"),
            ("online", "eth0", "", "network-transmit-receive", "Passive", "Online"),
        ]
        for (i, step) in steps.enumerated() {
            let before = watcher.signals.count
            try net.say(step.state, interface: step.interface, reason: step.reason)
            await Harness.waitUntil("signals for \(step.state) (step \(i))") {
                Set(watcher.signals.dropFirst(before).map(\.member)).isSuperset(of: ["NewIcon", "NewStatus", "NewToolTip"])
            }
            let seen = try #require(watcher.signals.last?.props, "step \(i)")
            #expect(seen["IconName"] as? String == step.icon, "step \(i)")
            #expect(seen["Status"] as? String == step.status, "step \(i)")
            let tooltip = seen["ToolTip"] as? [Any] ?? []
            #expect(tooltip.first as? String == step.icon, "step \(i): \(tooltip)")
            #expect(tooltip.count == 4 && tooltip[2] as? String == step.heading, "step \(i): \(tooltip)")
            let text = tooltip.count == 4 ? tooltip[3] as? String ?? "" : ""
            #expect(text.contains("Since "), "step \(i): \(text)")
            if !step.interface.isEmpty { #expect(text.contains(step.interface), "step \(i): \(text)") }
            if !step.reason.isEmpty { #expect(text.contains(step.reason), "step \(i): \(text)") }
        }

        // The menu, as the host reads it; the outage just over is listed.
        var menu = try #require(try watcher.menu(of: name, path: menuPath))
        #expect(menu.labels == ["Check now", "Mute for 1 hour", "Recent outages", "Open log"])
        await Harness.waitUntil("the outage in the menu") {
            // The outages are the lines to read (greyed out); "Open report" follows them.
            let items = (try? watcher.menu(of: name, path: menuPath))??.child("Recent outages")?.children ?? []
            let outages = items.filter { !$0.enabled }.map(\.label)
            return outages.count == 1 && outages[0].contains("offline for") && items.last?.label == "Open report"
        }

        // "Mute for 1 hour" mutes the daemon; the item then offers "Unmute", which unmutes it.
        #expect(try watcher.host(["click", name, menuPath, "Mute for 1 hour"]).status == 0)
        let now = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        await Harness.waitUntil("MutedUntil set") { (Self.mutedUntil(bus) ?? 0) > now + 3_000_000_000 }
        await Harness.waitUntil("Unmute offered") {
            (try? watcher.menu(of: name, path: menuPath))??.labels.contains("Unmute") == true
        }
        #expect(try watcher.host(["click", name, menuPath, "Unmute"]).status == 0)
        await Harness.waitUntil("MutedUntil cleared") { Self.mutedUntil(bus) == 0 }
        menu = try #require(try watcher.menu(of: name, path: menuPath))
        #expect(menu.labels.contains("Mute for 1 hour"))

        // A click on the icon is "Check now": the checking monitor is asked.
        #expect(try watcher.host(["activate", name]).status == 0)
        await Harness.waitUntil("a check request") { (try? String(contentsOfFile: checks, encoding: .utf8))?.contains("check") == true }

        // The watcher restarts: the item registers with the new one, by itself.
        watcher.stop()
        try await watcher.start()
        await Harness.waitUntil("registered again") { watcher.events("registered").count == 2 }
        #expect(watcher.itemName == name)
        #expect(!fixture.daemonLog.contains("warning"), "\(fixture.daemonLog)")
        #expect(await fixture.stop() == 0)
    }

    /// Hosts render the tooltip as markup: text from the network arrives
    /// escaped. And a session bus that is killed and started again gets the
    /// icon back, registered with its new watcher, without a restart.
    @Test(.requires(TrayWatcher.requirement)) func theTooltipIsEscapedAndTheIconComesBackWithTheSessionBus() async throws {
        let bus = try PrivateBus()
        let (fixture, net, _) = try daemon(on: bus.environment, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }

        let before = watcher.signals.count
        try net.say("limited", interface: "eth0", reason: "redirected to http://x/<b>hi</b>?a=1&b=2")
        await Harness.waitUntil("the new tooltip") { watcher.signals.dropFirst(before).contains { $0.member == "NewToolTip" } }
        let tooltip = watcher.signals.last?.props["ToolTip"] as? [Any] ?? []
        let text = tooltip.count == 4 ? tooltip[3] as? String ?? "" : ""
        #expect(text.contains("http://x/&lt;b&gt;hi&lt;/b&gt;?a=1&amp;b=2"), "\(text)")
        #expect(!text.contains("<b>"), "\(text)")

        // The session bus goes and a new one comes at the same address; the
        // watcher, which went with it, starts again on the new one.
        let first = try #require(watcher.itemName)
        try bus.restart()
        watcher.stop()
        try await watcher.start()
        await Harness.waitUntil(timeout: .seconds(20), "registered on the new bus") { watcher.events("registered").count == 2 }
        let second = try #require(watcher.itemName)
        #expect(second != first || watcher.events("registered").count == 2)
        let props = try watcher.host(["props", second])
        #expect(props.status == 0 && props.stdout.contains("lifeline"), "\(props.stderr)")
        let menu = try #require(try watcher.menu(of: second, path: "/StatusNotifierItem/Menu"))
        #expect(menu.labels == ["Check now", "Mute for 1 hour", "Recent outages", "Open log"])
        #expect(fixture.process?.isRunning == true)
        #expect(await fixture.stop() == 0)
    }

    /// "Recent outages" lists the last five outages of the log, newest first.
    @Test(.requires(TrayWatcher.requirement)) func recentOutagesAreTheLastFiveNewestFirst() async throws {
        let bus = try PrivateBus()
        let (fixture, _, _) = try daemon(on: bus.environment, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        // Seven outages on seven days, the i-th lasting i + 1 minutes.
        let day: Int64 = 86_400_000_000, minute: Int64 = 60_000_000
        let start = Int64(Date().timeIntervalSince1970 * 1_000_000) - 8 * day
        var lines: [String] = []
        for i in 0..<7 {
            let down = start + Int64(i) * day
            for (n, (state, previous, since)) in [("offline", "online", down), ("online", "offline", down + Int64(i + 1) * minute)].enumerated() {
                lines.append(#"{"state":"\#(state)","previous":"\#(previous)","since":\#(since),"interface":"eth0","kind":"ethernet","reason":"","rtt_ms":-1,"metered":false,"sequence":\#(i * 2 + n + 1)}"#)
            }
        }
        try FileManager.default.createDirectory(atPath: (fixture.eventLogPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(toFile: fixture.eventLogPath, atomically: true, encoding: .utf8)
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        var listed: [MenuNode] = []
        var submenu: [MenuNode] = []
        await Harness.waitUntil("the outages in the menu") {
            submenu = (try? watcher.menu(of: name, path: "/StatusNotifierItem/Menu"))??.child("Recent outages")?.children ?? []
            // The outages are the lines to read; "Open report" follows them.
            listed = submenu.filter { !$0.enabled }
            return listed.count == 5
        }
        #expect(submenu.last?.label == "Open report", "\(submenu.map(\.label))")
        #expect(submenu.last?.enabled == true)
        for (line, minutes) in zip(listed, [7, 6, 5, 4, 3]) {
            #expect(line.label.contains("offline for \(minutes)m"), "\(listed.map(\.label))")
            #expect(line.enabled == false, "a line to read, not to click: \(line.label)")
        }
        #expect(await fixture.stop() == 0)
    }

    /// "Open log" runs `xdg-open` with the path the log sink writes as one
    /// argument, no shell between, and does not wait for it: the sink answers
    /// the next click at once.
    @Test(.requires(TrayWatcher.requirement)) func openLogHandsThePathToXdgOpenAndWaitsForNothing() async throws {
        let bus = try PrivateBus()
        // A viewer that stays open: it writes its arguments, one per line, and its pid, and sleeps.
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-tray-bin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bin) }
        let opened = bin.appendingPathComponent("opened.txt").path
        let viewerPid = bin.appendingPathComponent("viewer.pid").path
        let viewer = bin.appendingPathComponent("xdg-open").path
        try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(opened)'; done\necho $$ > '\(viewerPid)'\nexec sleep 30\n"
            .write(toFile: viewer, atomically: true, encoding: .utf8)
        chmod(viewer, 0o755)
        defer {
            if let pid = (try? String(contentsOfFile: viewerPid, encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(pid, SIGKILL)
            }
        }
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let (daemonFixture, net, checks) = try daemon(on: bus.environment.merging(["PATH": path]) { $1 }, sinks: [])
        let log = daemonFixture.path("it's a $(touch pwned) log.jsonl")
        defer { daemonFixture.stopNow() }
        try String(contentsOfFile: daemonFixture.configPath, encoding: .utf8).appending("""

            [[sink]]
            kind = "log"
            path = "\(log)"

            [[sink]]
            kind = "tray"
            """).write(toFile: daemonFixture.configPath, atomically: true, encoding: .utf8)
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: daemonFixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try daemonFixture.start()
        try net.say("offline", reason: "cable pulled")
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        #expect(try watcher.host(["click", name, "/StatusNotifierItem/Menu", "Open log"]).status == 0)
        await Harness.waitUntil("xdg-open ran") { (try? String(contentsOfFile: opened, encoding: .utf8)) != nil }
        #expect(try String(contentsOfFile: opened, encoding: .utf8) == log + "\n")
        // The viewer is still open; the menu answers the next click at once.
        #expect(try watcher.host(["click", name, "/StatusNotifierItem/Menu", "Check now"]).status == 0)
        await Harness.waitUntil("a check request") {
            (try? String(contentsOfFile: checks, encoding: .utf8))?.contains("check") == true
        }
        #expect(!FileManager.default.fileExists(atPath: daemonFixture.path("pwned")))
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/pwned"))
        #expect(await daemonFixture.stop() == 0)
    }

    /// "Open report" (under "Recent outages") writes the `history --report` page
    /// to the runtime folder, private, and hands it to `xdg-open`, which is not
    /// waited for but reaped once it exits: no zombie is left behind.
    @Test(.requires(TrayWatcher.requirement)) func openReportWritesThePagePrivatelyAndOpensIt() async throws {
        let bus = try PrivateBus()
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-tray-bin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bin) }
        let opened = bin.appendingPathComponent("opened.txt").path
        let viewer = bin.appendingPathComponent("xdg-open").path
        // A viewer that notes what it was given and exits at once.
        try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(opened)'; done\n".write(toFile: viewer, atomically: true, encoding: .utf8)
        chmod(viewer, 0o755)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let (fixture, net, _) = try daemon(on: bus.environment.merging(["PATH": path]) { $1 }, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        try fixture.start()
        try net.say("offline", reason: "cable <b>pulled</b>")
        await Harness.waitUntil("offline in the log") { fixture.loggedStates().contains("offline") }
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        #expect(try watcher.host(["click", name, "/StatusNotifierItem/Menu", "Open report"]).status == 0)
        await Harness.waitUntil("xdg-open ran") { (try? String(contentsOfFile: opened, encoding: .utf8)) != nil }
        let report = fixture.path("run/lifeline/report.html")
        #expect(try String(contentsOfFile: opened, encoding: .utf8) == report + "\n")
        var info = stat()
        #expect(stat(report, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let page = try String(contentsOfFile: report, encoding: .utf8)
        #expect(page.contains("cable &lt;b&gt;pulled&lt;/b&gt;"), "the outage in the page")
        #expect(page.contains("<rect class=\"offline\""))
        // The viewer exited: the daemon reaped it.
        let daemonPid = try #require(fixture.process?.pid)
        await Harness.waitUntil(timeout: .seconds(5), "no zombie child") { Self.zombieChildren(of: daemonPid).isEmpty }
        #expect(await fixture.stop() == 0)
    }

    /// The children of `pid` (any of its threads) that have exited and not been reaped.
    static func zombieChildren(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
        }
        return children.filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].hasPrefix(" Z")
        }
    }

    /// No tray host at first: the daemon says nothing above debug level about it,
    /// and registers as soon as one appears.
    @Test(.requires(TrayWatcher.requirement)) func aWatcherThatComesLaterGetsTheIconAndNoOneIsToldBefore() async throws {
        let bus = try PrivateBus()
        let (fixture, net, _) = try daemon(on: bus.environment, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        try fixture.start()
        // A reason is another program's text: a right-to-left override and a terminal escape in it.
        try net.say("offline", reason: "cable\\u202e pulled\\u001b[31m")
        await fixture.waitForLogged(["offline"])
        await Harness.waitUntil("the tray looked for a host") { fixture.daemonLog.contains("no tray host on the session bus") }
        let said = fixture.daemonLog.split(separator: "\n").filter { $0.contains("tray") }
        #expect(said.allSatisfy { $0.contains("debug") }, "\(said)")

        let watcher = TrayWatcher(bus: bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start()
        defer { watcher.stop() }
        await Harness.waitUntil("the item registers") { watcher.itemName != nil }
        let name = try #require(watcher.itemName)
        let props = try #require(try JSONSerialization.jsonObject(with: Data(watcher.host(["props", name]).stdout.utf8)) as? [String: Any])
        #expect(props["Status"] as? String == "NeedsAttention")
        #expect(props["IconName"] as? String == "network-offline")
        let text = (props["ToolTip"] as? [Any])?.last as? String ?? ""
        #expect(text.contains("cable pulled"), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(!text.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x1B }, "\(text.debugDescription)")
        #expect(await fixture.stop() == 0)
    }

    /// A real tray: waybar under headless sway shows the icon, and a different one once offline.
    @Test(.requires(.rootAnd(WaylandTray.tools + ["tail"]))) func waybarShowsTheIconChangeFromOnlineToOffline() async throws {
        let tray = try WaylandTray()
        try await tray.start()
        let empty = try tray.trayCorner(named: "tray-empty.png")
        let (fixture, net, _) = try daemon(on: tray.environment, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        try fixture.start()
        try net.say("online", interface: "eth0")
        await fixture.waitForLogged(["online"])
        let online = await Self.settledCorner(tray, named: "tray-online-corner.png", unlike: empty)
        _ = try tray.screenshot(named: "tray-online.png")
        try net.say("offline", reason: "cable pulled")
        await fixture.waitForLogged(["online", "offline"])
        let offline = await Self.settledCorner(tray, named: "tray-offline-corner.png", unlike: online)
        _ = try tray.screenshot(named: "tray-offline.png")
        #expect(WaylandTray.colours(online) > 2, "the online corner is blank")
        #expect(WaylandTray.colours(offline) > 2, "the offline corner is blank")
        #expect(WaylandTray.differingPixels(online, offline) > 20, "\(tray.logs)")
        #expect(await fixture.stop() == 0)
    }

    /// KDE Plasma's system tray: the icon registers with the watcher Plasma's
    /// kded5 runs, Plasma's tray shows it in the panel while offline (an item
    /// that is only Passive waits behind the tray's arrow), and its menu reads as
    /// on any host.
    @Test(.requires(PlasmaDesktop.requirement(), TrayWatcher.requirement)) func plasmaShowsTheIconWhileOfflineAndItsMenuReads() async throws {
        let plasma = try PlasmaDesktop()
        try await plasma.start()
        try await plasma.startTray()
        let (fixture, net, _) = try daemon(on: plasma.environment, sinks: ["tray", "log"])
        defer { fixture.stopNow() }
        try fixture.start()
        try net.say("online", interface: "eth0")
        await fixture.waitForLogged(["online"])
        var registered: [String] {
            // as: ['<unique name>/StatusNotifierItem']
            (plasma.watcherProperty("RegisteredStatusNotifierItems") ?? "").split(separator: "'").filter { $0.hasSuffix("/StatusNotifierItem") }
                .map(String.init)
        }
        await Harness.waitUntil("the icon registered with Plasma's watcher") { registered.count == 1 }
        let item = try #require(registered.first)
        let name = String(item.prefix { $0 != "/" })
        let host = TrayWatcher(busAddress: plasma.busAddress, log: URL(fileURLWithPath: fixture.path("host.jsonl")))
        let menu = try #require(try host.menu(of: name, path: "/StatusNotifierItem/Menu"))
        #expect(menu.labels == ["Check now", "Mute for 1 hour", "Recent outages", "Open log"])

        let online = try await Self.trayCorner(plasma, state: "online", unlike: nil)
        try net.say("offline", reason: "cable pulled")
        await fixture.waitForLogged(["online", "offline"])
        let offline = try await Self.trayCorner(plasma, state: "offline", unlike: online)
        #expect(WaylandTray.differingPixels(online, offline) > 20, "the icon did not appear in Plasma's panel:\n\(plasma.logs)")
        try net.say("online", interface: "eth0")
        await Harness.waitUntil("online again") { fixture.loggedStates().last == "online" }
        let again = try await Self.trayCorner(plasma, state: "online-again", unlike: offline)
        // The crop stops before the panel's clock (a new minute would differ by hundreds of pixels); the icon is hundreds.
        #expect(WaylandTray.differingPixels(online, again) <= 20, "back online, the panel is not as it was before the outage")
        #expect(plasma.shellIsRunning)
        #expect(await fixture.stop() == 0)
    }

    /// The left end of Plasma's panel, where its tray and clock are (without
    /// plasma-desktop's task manager they sit at the left), once it differs from
    /// `unlike` and is drawn (two pictures alike); the whole screen is kept as
    /// `artifacts/tray-plasma-<state>.png`.
    static func trayCorner(_ plasma: PlasmaDesktop, state: String, unlike: URL?) async throws -> URL {
        let corner = plasma.root.appendingPathComponent("\(state)-corner.png")
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            let shot = try await plasma.settledScreenshot(named: "tray-plasma-\(state).png", unlike: nil)
            try Harness.run(["convert", shot.path, "-crop", "240x44+0+756", "+repage", corner.path])
            if unlike.map({ WaylandTray.differingPixels($0, corner) > 20 }) ?? true { break }
        } while ContinuousClock.now < deadline
        return corner
    }

    /// A tray host that stops answering (SIGSTOP after taking the registration,
    /// before replying) delays neither the daemon's D-Bus service nor the toast.
    @Test(.requires(TrayWatcher.requirement, .tools(Desktop.tools))) func aHungTrayHostDelaysNeitherTheServiceNorTheToast() async throws {
        let desktop = try Desktop()
        try await desktop.startNotificationServer()
        let (fixture, net, _) = try daemon(on: desktop.environment, sinks: ["tray", "dbus", "libnotify", "log"])
        defer { fixture.stopNow() }
        let watcher = TrayWatcher(bus: desktop.bus, log: URL(fileURLWithPath: fixture.path("watcher.jsonl")))
        try await watcher.start(hang: true)
        defer { watcher.stop() }
        try fixture.start()
        await Harness.waitUntil("serving") { fixture.daemonLog.contains("serving \(Self.lifeline)") }
        await Harness.waitUntil("the host took the registration and hung") {
            watcher.itemName != nil && Self.isStopped(watcher.pid)
        }
        let client = try BusConnection.connect(address: desktop.bus.address)
        func roundTrip() throws -> Double {
            let m = try BusMessage.methodCall(destination: Self.lifeline, path: "/org/lifeline/Lifeline1", interface: Self.lifeline, member: "GetStatus")
            let start = ContinuousClock.now
            do { _ = try client.callBlocking(m, timeout: .seconds(2)) } catch { return .infinity }
            return (ContinuousClock.now - start).inMilliseconds
        }
        var calls: [Double] = []
        var toasts: [Double] = []
        for (i, state) in ["online", "offline", "limited", "offline"].enumerated() {
            let asked = ContinuousClock.now
            try net.say(state, interface: state == "offline" ? "" : "eth0", reason: "step \(i)")
            await Harness.waitUntil("step \(i) published") { fixture.loggedStates().count == i + 1 }
            if state == "offline", toasts.isEmpty {
                await Harness.waitUntil("toast for step \(i)") { desktop.displayedCount() == 1 }
                toasts.append((ContinuousClock.now - asked).inMilliseconds)
            }
            for _ in 0..<5 { calls.append(try roundTrip()) }
        }
        // A loop held by the host would hold each call for D-Bus's 25 s; a tenth of
        // a second leaves room for two cores shared with builds.
        #expect(NotifyHangTests.p95(calls) < 100, "GetStatus round trips, ms: \(calls)")
        #expect(toasts.allSatisfy { $0 < 1000 }, "offline published → toast on screen, ms: \(toasts)")
        #expect(Self.isStopped(watcher.pid), "the host was to stay hung throughout")
        let asked = ContinuousClock.now
        #expect(await fixture.stop(timeout: .seconds(10)) == 0)
        #expect(ContinuousClock.now - asked < .seconds(5), "the daemon's exit waited on the hung host")
    }

    /// The tray's corner once it differs from `unlike` and two pictures in a
    /// row agree (waybar has drawn what it read).
    static func settledCorner(_ tray: WaylandTray, named name: String, unlike: URL) async -> URL {
        var last: URL?
        var settled = unlike
        await Harness.waitUntil("\(name) drawn and settled") {
            guard let shot = try? tray.trayCorner(named: name), WaylandTray.differingPixels(unlike, shot) > 20 else { return false }
            let kept = tray.root.appendingPathComponent(name + ".previous.png")
            defer {
                try? FileManager.default.removeItem(at: kept)
                try? FileManager.default.copyItem(at: shot, to: kept)
                last = kept
            }
            guard let last, WaylandTray.differingPixels(last, shot) == 0 else { return false }
            settled = shot
            return true
        }
        return settled
    }

    /// Whether `pid` is stopped (state T in /proc).
    static func isStopped(_ pid: pid_t?) -> Bool {
        guard let pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "T"
    }

    /// The daemon's MutedUntil property over D-Bus (µs since the epoch; 0 when not muted).
    static func mutedUntil(_ bus: PrivateBus) -> UInt64? {
        guard let r = try? Harness.run(["gdbus", "call", "--session", "--dest", lifeline, "--object-path", "/org/lifeline/Lifeline1",
                                        "--method", "org.freedesktop.DBus.Properties.Get", lifeline, "MutedUntil"],
                                       environment: ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }),
              r.status == 0 else { return nil }
        // "(<uint64 1763912345000000>,)"
        let digits = r.stdout.split(separator: " ").last?.prefix { $0.isNumber } ?? ""
        return UInt64(digits)
    }
}
