import Foundation
import LifelineTestKit
import Testing

/// Lifeline behind GLib's GNetworkMonitor: real GLib applications (Python's gi
/// and a C program) and Debian's desktop portal load the GIO module through
/// `GIO_EXTRA_MODULES`, on a private session bus where the daemon serves
/// `org.lifeline.Lifeline1`. GLib alone picks the monitor.
@Suite(.serialized) struct GioModuleTests {
    static let lab = Harness.Requirement.all(.rootAnd(["ip", "nft", "python3"]), GioMonitorClient.requirement)
    static let portalPath = "/usr/libexec/xdg-desktop-portal"
    static let desktopPortal = Harness.Requirement {
        FileManager.default.isExecutableFile(atPath: portalPath) ? nil : "missing \(portalPath) (Debian's xdg-desktop-portal)"
    }

    /// The daemon on a private bus, driven by a scripted exec monitor (no
    /// network needed: what is tested is what the applications are told).
    final class Scripted: @unchecked Sendable {
        let bus: PrivateBus
        let daemon: DaemonFixture
        let network: ScriptedNetwork

        init(bus: PrivateBus? = nil) throws {
            try GioMonitorClient.buildModule()
            self.bus = try bus ?? PrivateBus()
            daemon = try DaemonFixture(extraEnvironment: self.bus.environment)
            network = ScriptedNetwork(fixture: daemon)
            try daemon.writeConfig(network.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"log\""))
        }

        var appEnvironment: [String: String] { GioMonitorClient.environment(bus: bus, folder: daemon.root.path) }

        func start() async throws {
            try daemon.start()
            await Harness.waitUntil("the daemon to own org.lifeline.Lifeline1") { daemon.daemonLog.contains("serving org.lifeline.Lifeline1") }
        }

        func client(_ language: GioMonitorClient.Language = .python, name: String) async throws -> GioMonitorClient {
            try await GioMonitorClient(language, environment: appEnvironment, folder: daemon.root.path, name: name)
        }
    }

    // MARK: A real network

    /// The daemon in a network namespace with a local check server (netlink and
    /// probe monitors), and applications in the same namespace.
    final class Walk: @unchecked Sendable {
        let lab: ProbeLab
        let bus: PrivateBus
        let daemon: DaemonFixture

        init() async throws {
            try GioMonitorClient.buildModule()
            lab = try ProbeLab()
            bus = try PrivateBus()
            try lab.startServer(.ok)
            let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
            daemon = try DaemonFixture(extraEnvironment: direct.merging(bus.environment) { $1 })
            try daemon.writeConfig(ProbeTests.config(url: lab.checkURL, interval: "1500ms"))
            daemon.commandPrefix = ["ip", "netns", "exec", lab.namespace]
            try daemon.start()
            #expect(await daemon.waitForState("online", timeout: .seconds(15)))
        }

        func client(_ language: GioMonitorClient.Language, name: String, use: String? = nil) async throws -> GioMonitorClient {
            var env = GioMonitorClient.environment(bus: bus, folder: daemon.root.path)
            env["GIO_USE_NETWORK_MONITOR"] = use
            return try await GioMonitorClient(language, environment: env, folder: daemon.root.path, name: name,
                                              prefix: ["ip", "netns", "exec", lab.namespace])
        }
    }

    /// offline, limited, portal and online, each published once by the daemon,
    /// reach a Python and a C application as the three properties and exactly one
    /// `network-changed` each.
    @Test(.requires(GioModuleTests.lab)) func propertiesFollowTheDaemonThroughEveryState() async throws {
        let walk = try await Walk()
        let python = try await walk.client(.python, name: "python")
        let c = try await walk.client(.c, name: "c")
        let published = walk.daemon.loggedStates().count
        for client in [python, c] {
            let start = try #require(client.start)
            #expect(start.name == "LifelineNetworkMonitor")
            #expect(start.available && start.connectivity == GioConnectivity.full && !start.metered)
        }

        walk.lab.stopServers()  // the check server refuses: limited
        #expect(await walk.daemon.waitForState("limited", timeout: .seconds(15)))
        for client in [python, c] { await client.waitForChange(to: GioConnectivity.limited) }

        try walk.lab.startServer(.redirect)  // a captive portal answers
        #expect(await walk.daemon.waitForState("portal", timeout: .seconds(15)))
        for client in [python, c] { await client.waitForChange(to: GioConnectivity.portal) }

        try walk.lab.net.link(.outside, up: false)  // the carrier goes: offline
        #expect(await walk.daemon.waitForState("offline", timeout: .seconds(15)))
        for client in [python, c] { await client.waitForChange(to: GioConnectivity.local) }

        walk.lab.stopServers()
        try walk.lab.startServer(.ok)
        try walk.lab.net.link(.outside, up: true)
        #expect(await walk.daemon.waitForState("online", timeout: .seconds(15)))
        for client in [python, c] { await client.waitForChange(to: GioConnectivity.full) }

        let transitions = Array(walk.daemon.loggedStates().dropFirst(published))
        #expect(transitions == ["limited", "portal", "offline", "online"])
        for client in [python, c] {
            let changes = client.changes
            #expect(changes.map(\.connectivity) == transitions.map(GioConnectivity.of), "\(client.process.output)")
            #expect(changes.map(\.available) == transitions.map { $0 != "offline" })
            #expect(changes.allSatisfy { !$0.metered })
            // Each property's notify came with its change, before the signal.
            let notified = client.lines.filter { $0.kind == "notify" && $0.name == "connectivity" }
            #expect(notified.map(\.connectivity) == changes.map(\.connectivity))
        }
    }

    /// 150 veth pairs come and go beside the application: GLib's netlink monitor
    /// signals, Lifeline's says nothing; the next real change is its one signal.
    @Test(.requires(GioModuleTests.lab)) func vethChurnSignalsNothing() async throws {
        let walk = try await Walk()
        let lifeline = try await walk.client(.python, name: "lifeline")
        let netlink = try await walk.client(.python, name: "netlink", use: "netlink")
        #expect(lifeline.start?.name == "LifelineNetworkMonitor")
        #expect(netlink.start?.name == "GNetworkMonitorNetlink")

        try walk.lab.net.churn(pairs: 150)
        // The barrier: a change the daemon publishes after it has read every
        // churn message (netlink delivers in order).
        walk.lab.stopServers()
        #expect(await walk.daemon.waitForState("limited", timeout: .seconds(15)))
        await lifeline.waitForChange(to: GioConnectivity.limited)
        #expect(lifeline.changes.count == 1, "\(lifeline.process.output)")
        #expect(netlink.changes.count > 0, "GLib's netlink monitor did not see the churn: \(netlink.process.output)")
    }

    // MARK: The portal

    /// Debian's xdg-desktop-portal, which answers sandboxed applications from
    /// GLib's default monitor, answers Lifeline's state and signals `changed`
    /// once per transition.
    @Test(.requires(GioMonitorClient.requirement, .tools(["gdbus", "dbus-monitor"]), GioModuleTests.desktopPortal))
    func theDesktopPortalAnswersLifelinesState() async throws {
        // No service folders: nothing the portal asks for is started on this bus.
        let bus = try PrivateBus(serviceFolder: nil)
        let setup = try Scripted(bus: bus)
        try await setup.start()
        try setup.network.say("online", interface: "eth0")
        #expect(await setup.daemon.waitForState("online", timeout: .seconds(10)))

        var env = setup.appEnvironment
        env["XDG_RUNTIME_DIR"] = setup.daemon.path("run")
        let portal = try BackgroundProcess([Self.portalPath, "--verbose"], environment: env,
                                           output: URL(fileURLWithPath: setup.daemon.path("portal.log")))
        defer { portal.stop() }
        func call(_ method: String) throws -> String {
            try Harness.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.portal.Desktop",
                             "--object-path", "/org/freedesktop/portal/desktop",
                             "--method", "org.freedesktop.portal.NetworkMonitor." + method], environment: env).stdout
        }
        await Harness.waitUntil(timeout: .seconds(20), "the portal's NetworkMonitor (\(portal.output))") {
            (try? call("GetConnectivity"))?.contains("uint32") == true
        }
        let changed = try BackgroundProcess(["dbus-monitor", "--session", "type='signal',interface='org.freedesktop.portal.NetworkMonitor',member='changed'"],
                                            environment: env, output: URL(fileURLWithPath: setup.daemon.path("changed.log")))
        defer { changed.stop() }
        await Harness.waitUntil("dbus-monitor to listen") { changed.output.contains("NameAcquired") }
        #expect(try call("GetStatus").contains("'connectivity': <uint32 4>"))

        let steps: [(state: String, metered: Bool, connectivity: Int)] = [
            ("limited", false, 2), ("portal", false, 3), ("offline", false, 1), ("online", true, 4),
        ]
        for (number, step) in steps.enumerated() {
            try setup.network.raw("{\"state\":\"\(step.state)\",\"interface\":\"eth0\",\"metered\":\(step.metered)}")
            await Harness.waitUntil("GetConnectivity to answer \(step.connectivity) for \(step.state)") {
                (try? call("GetConnectivity")) == "(uint32 \(step.connectivity),)\n"
            }
            let status = try call("GetStatus")
            #expect(status.contains("'available': <\(step.state != "offline")>"), "\(status)")
            #expect(status.contains("'metered': <\(step.metered)>"), "\(status)")
            #expect(status.contains("'connectivity': <uint32 \(step.connectivity)>"), "\(status)")
            await Harness.waitUntil("the portal's changed signal number \(number + 1)") {
                changed.output.components(separatedBy: "member=changed").count - 1 >= number + 1
            }
        }
        // Once per transition: the daemon's `GetStatus` in between changed nothing.
        let transitions = setup.daemon.loggedStates()
        #expect(transitions == ["online", "limited", "portal", "offline", "online"])
        let signals = changed.output.components(separatedBy: "member=changed").count - 1
        #expect(signals == steps.count, "\(changed.output)")
    }

    // MARK: No daemon, a daemon that goes and comes back

    /// With nobody owning the name, GLib takes its next monitor at once, and the
    /// module starts nothing: a D-Bus activation file for the name stays unused.
    @Test(.requires(GioMonitorClient.requirement)) func withoutTheDaemonGLibFallsBackAtOnce() async throws {
        try GioMonitorClient.buildModule()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-fallback-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder + "/services", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let started = folder + "/activated"
        try "#!/bin/sh\ntouch '\(started)'\nexec sleep 30\n".write(toFile: folder + "/fake-daemon", atomically: true, encoding: .utf8)
        chmod(folder + "/fake-daemon", 0o755)
        try "[D-BUS Service]\nName=org.lifeline.Lifeline1\nExec=\(folder)/fake-daemon\n"
            .write(toFile: folder + "/services/org.lifeline.Lifeline1.service", atomically: true, encoding: .utf8)
        let bus = try PrivateBus(serviceFolder: folder + "/services")
        let env = GioMonitorClient.environment(bus: bus, folder: folder)
        for language in [GioMonitorClient.Language.python, .c] {
            let app = try await GioMonitorClient(language, environment: env, folder: folder, name: "\(language)")
            let start = try #require(app.start)
            #expect(start.name == "GNetworkMonitorNetlink")
            // Well under any D-Bus timeout (25 s) or an activation: the bus says at once that no one owns the name.
            let took = try #require(start.getDefaultMs)
            #expect(took < 1000, "get_default() took \(took) ms")
            print("get_default() without the daemon (\(language)): \(took) ms")
        }
        #expect(!FileManager.default.fileExists(atPath: started), "the module started the daemon through the bus")
    }

    /// A program with no session bus (a root GUI program, a system service) asks
    /// for the network monitor: the module declines without trying to start a
    /// bus (GLib would run dbus-launch where $DISPLAY is set).
    @Test(.requires(GioMonitorClient.requirement, .tools(["strace", "dbus-launch"]))) func withoutASessionBusNoBusIsStarted() throws {
        try GioMonitorClient.buildModule()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-nobus-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder + "/run", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["XDG_RUNTIME_DIR"] = folder + "/run"
        env["DISPLAY"] = ":97"  // no X server: a dbus-launch would fail, but it must not even run
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + folder + "/no-system-bus"
        env["GIO_EXTRA_MODULES"] = GioMonitorClient.moduleFolder
        let trace = folder + "/execs"
        let client = try GioMonitorClient.compileC(into: folder)
        let run = try Harness.run(["strace", "-f", "-e", "trace=execve", "-o", trace, client, "start"], environment: env)
        #expect(run.stdout.split(separator: " ").dropFirst(2).first == "GNetworkMonitorNetlink", "\(run)")
        let execs = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        let launches = execs.split(separator: "\n").filter { $0.contains("dbus-launch") }
        #expect(launches.isEmpty, "\(launches)")
    }

    /// With NetworkManager on the system bus, GLib's NetworkManager monitor
    /// could start too: Lifeline's, registered above it, is the default while
    /// the daemon runs, and NetworkManager's is GLib's next one without it.
    @Test(.requires(GioMonitorClient.requirement, NetworkManagerMock.requirement)) func lifelineRanksAboveNetworkManager() async throws {
        let networkManager = try NetworkManagerMock()
        try await networkManager.start()
        let setup = try Scripted()
        var env = setup.appEnvironment
        env.merge(networkManager.environment) { $1 }
        let without = try await GioMonitorClient(.python, environment: env, folder: setup.daemon.root.path, name: "without")
        #expect(without.start?.name == "GNetworkMonitorNM")

        try await setup.start()
        let with = try await GioMonitorClient(.python, environment: env, folder: setup.daemon.root.path, name: "with")
        #expect(with.start?.name == "LifelineNetworkMonitor")
        await networkManager.stop()
    }

    /// A daemon that owns the name but does not answer (stopped) delays no
    /// application by more than the module's bound: GLib falls back.
    @Test(.requires(GioMonitorClient.requirement)) func aStoppedDaemonDelaysApplicationsOnlyBriefly() async throws {
        let setup = try Scripted()
        try await setup.start()
        let pid = try #require(setup.daemon.process?.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let app = try await setup.client(name: "app")
        let start = try #require(app.start)
        #expect(start.name == "GNetworkMonitorNetlink")
        let took = try #require(start.getDefaultMs)
        #expect(took < 5000, "get_default() took \(took) ms")
        print("get_default() with a stopped daemon: \(took) ms")
    }

    /// The daemon stops under a running application: it is not left on the
    /// last verdict but told "no verdict" (available, full, not metered: what
    /// GLib reports when it knows nothing), once; the daemon comes back and the
    /// application follows it again.
    @Test(.requires(GioMonitorClient.requirement)) func theApplicationFollowsTheDaemonAcrossARestart() async throws {
        let setup = try Scripted()
        try await setup.start()
        try setup.network.raw("{\"state\":\"limited\",\"interface\":\"eth0\",\"metered\":true}")
        #expect(await setup.daemon.waitForState("limited", timeout: .seconds(10)))
        let app = try await setup.client(name: "app")
        #expect(app.start?.connectivity == GioConnectivity.limited && app.start?.metered == true)

        #expect(await setup.daemon.stop() == 0)
        await app.waitForChange(to: GioConnectivity.full, metered: false)
        #expect(app.changes.last?.available == true)

        // The same feed: the daemon decides `limited` again.
        try await setup.start()
        await app.waitForChange(to: GioConnectivity.limited, metered: true)
        #expect(app.changes.map(\.connectivity) == [GioConnectivity.full, GioConnectivity.limited], "\(app.process.output)")
    }

    /// Only the owner of org.lifeline.Lifeline1 is believed: another peer's
    /// PropertiesChanged, addressed to the application, changes nothing, while
    /// the daemon runs and while no one owns the name.
    @Test(.requires(GioMonitorClient.requirement, .tools(["gdbus"]))) func aSpoofedPropertiesChangedIsIgnored() async throws {
        let setup = try Scripted()
        try await setup.start()
        try setup.network.say("online", interface: "eth0")
        #expect(await setup.daemon.waitForState("online", timeout: .seconds(10)))
        let app = try await setup.client(name: "app")
        let unique = try #require(app.start?.uniqueName)
        func spoof() throws {
            let sent = try Harness.run(["gdbus", "emit", "--session", "--dest", unique, "--object-path", "/org/lifeline/Lifeline1",
                                        "--signal", "org.freedesktop.DBus.Properties.PropertiesChanged", "org.lifeline.Lifeline1",
                                        "{'State': <'offline'>, 'Sequence': <uint64 999>, 'Metered': <true>}", "@as []"],
                                       environment: setup.appEnvironment)
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        try spoof()
        // The barrier: a real change from the daemon comes after the spoof.
        try setup.network.say("limited", interface: "eth0")
        await app.waitForChange(to: GioConnectivity.limited)

        #expect(await setup.daemon.stop() == 0)
        await app.waitForChange(to: GioConnectivity.full)
        try spoof()
        // The next daemon reads only `limited` (not `online` first, a transition of its own).
        try Data().write(to: URL(fileURLWithPath: setup.network.feed))
        try setup.network.say("limited", interface: "eth0")
        try await setup.start()
        await app.waitForChange(to: GioConnectivity.limited)
        #expect(app.changes.map(\.connectivity) == [GioConnectivity.limited, GioConnectivity.full, GioConnectivity.limited],
                "\(app.process.output)")
        #expect(app.changes.allSatisfy { $0.available && !$0.metered })
    }

    /// can_reach answers as GLib's own monitors do, and can_reach_async leaves
    /// the application's main loop running while the name resolves.
    @Test(.requires(GioModuleTests.lab)) func canReachAnswersAsGLibDoes() async throws {
        let walk = try await Walk()
        let env = GioMonitorClient.environment(bus: walk.bus, folder: walk.daemon.root.path)
        func reach(_ host: String) throws -> String {
            try Harness.run(["ip", "netns", "exec", walk.lab.namespace, "/usr/bin/python3",
                             GioMonitorClient.resources + "/network_monitor_client.py", "reach", host, "8080"], environment: env).stdout
        }
        let online = try reach(walk.lab.hostAddress)
        #expect(online.contains("sync OK") && online.contains("async OK"), "\(online)")
        // A name the lab's resolver never answers (its port 53 is blackholed): the
        // lookup takes seconds, and the main loop keeps running meanwhile.
        try walk.lab.net.filter(.outside, name: "lldns_\(walk.lab.net.tag)", rule: ["udp", "dport", "53", "drop"])
        let slow = try reach("check.lifeline.invalid")
        let ticks = slow.split(separator: "\n").first { $0.hasPrefix("ticks ") }.flatMap { Int($0.dropFirst(6)) } ?? 0
        #expect(ticks > 0 && slow.contains("async ") && !slow.contains("async OK"), "\(slow)")

        try walk.lab.net.link(.outside, up: false)
        #expect(await walk.daemon.waitForState("offline", timeout: .seconds(15)))
        let offline = try reach(walk.lab.hostAddress)
        #expect(offline.contains("sync network-unreachable") && offline.contains("async network-unreachable"), "\(offline)")
    }

    // MARK: The package

    /// The .deb installed with dpkg into a throwaway copy of this system (an
    /// overlay of / in a private mount namespace, where every dependency is
    /// present): GIO's module cache lists the module once it is installed, and
    /// no longer once it is removed. Debian's libglib2.0-0 refreshes the cache
    /// (a dpkg trigger on the module folder).
    @Test(.requires(.rootAnd(["dpkg", "unshare", "chroot", "pkg-config", "mount"])))
    func installingThePackageRegistersTheModuleAndRemovingItUnregistersIt() throws {
        let built = Installation.builtPackage()
        try Harness.require(missing: built == nil ? "no package in .build/deb: `make test` builds it with `make deb` first" : nil)
        guard let deb = built else { return }
        let box = try Installation()
        let modules = try Harness.run(["pkg-config", "--variable=giomoduledir", "gio-2.0"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let script = """
            set -e
            box=$1 deb=$2 modules=$3
            mount -t tmpfs tmpfs "$box"
            mkdir "$box/upper" "$box/work" "$box/root"
            mount -t overlay overlay -o "lowerdir=/,upperdir=$box/upper,workdir=$box/work" "$box/root"
            mount --bind /proc "$box/root/proc"
            mount --bind /dev "$box/root/dev"
            cp "$deb" "$box/root/lifeline.deb"
            # man-db's trigger would index every manual page of the system.
            rm -f "$box/root/var/lib/man-db/auto-update"
            chroot "$box/root" dpkg -i /lifeline.deb >&2
            echo "== installed"
            cat "$box/root$modules/giomodule.cache"
            chroot "$box/root" dpkg -r lifeline >&2
            echo "== removed"
            cat "$box/root$modules/giomodule.cache"
            """
        let r = try Harness.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                                 box.path(""), deb, modules])
        #expect(r.status == 0, "\(r.stderr)")
        let parts = r.stdout.components(separatedBy: "== removed")
        #expect(parts.count == 2, "\(r.stdout)")
        let installed = parts.first ?? "", removed = parts.last ?? ""
        #expect(installed.contains("liblifeline-gio.so: gio-network-monitor"), "\(r.stdout)\n\(r.stderr)")
        #expect(!removed.contains("liblifeline-gio.so"), "\(r.stdout)")
        #expect(removed.contains("libgiognutls.so") || !installed.contains("libgiognutls.so"), "other modules stay registered: \(r.stdout)")
    }
}
