import Foundation
import LifelineTestKit
import LifelineDBus
import LifelineGLib
import Testing

/// The service's methods as callers use them: Mute's bound, Check() from many
/// peers at once, and the mute state shown as a property.
@Suite struct DBusControlTests {
    static let name = "org.lifeline.Lifeline1"
    static let path = "/org/lifeline/Lifeline1"

    /// A private bus and a daemon whose exec monitor can check on demand: each
    /// `check` line it reads is recorded in `checks.txt` at once and answered
    /// one second later, so concurrent checks overlap.
    final class Setup: @unchecked Sendable {
        let bus: PrivateBus
        let daemon: DaemonFixture
        let checks: String

        init() throws {
            bus = try PrivateBus()
            daemon = try DaemonFixture(extraEnvironment: bus.environment)
            checks = daemon.path("checks.txt")
            FileManager.default.createFile(atPath: checks, contents: nil)
            let script = try daemon.writeScript("monitor.sh", """
                #!/bin/sh
                echo '{"state":"online","interface":"eth0","reason":"start"}'
                while read -r line; do
                  echo "$line" >> '\(checks)'
                  (sleep 1; echo '{"state":"online","interface":"eth0","reason":"checked"}') &
                done
                """)
            try daemon.writeConfig("""
                [debounce]
                down = "0s"
                up = "0s"

                [[monitor]]
                kind = "exec"
                command = ["\(script)"]
                checks = true

                [[sink]]
                kind = "dbus"
                """)
        }

        var env: [String: String] { daemon.environment }

        func start() async throws {
            try daemon.start()
            await Harness.waitUntil("the daemon to own \(DBusControlTests.name)") {
                daemon.daemonLog.contains("serving \(DBusControlTests.name)")
            }
            await Harness.waitUntil("online") { stateFile.contains(#""state":"online""#) }
        }

        var stateFile: String { (try? String(contentsOfFile: daemon.stateFilePath, encoding: .utf8)) ?? "" }

        func gdbusCall(_ method: String, _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
            try Harness.run(["gdbus", "call", "--session", "--dest", DBusControlTests.name, "--object-path", DBusControlTests.path,
                             "--method", "org.lifeline.Lifeline1.\(method)"] + arguments, environment: env)
        }

        func getProperty(_ name: String) throws -> String {
            try Harness.run(["dbus-send", "--session", "--print-reply", "--dest=\(DBusControlTests.name)", DBusControlTests.path,
                             "org.freedesktop.DBus.Properties.Get", "string:\(DBusControlTests.name)", "string:\(name)"],
                            environment: env).stdout
        }

        var recordedChecks: [String] {
            ((try? String(contentsOfFile: checks, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    static let tools = ["dbus-daemon", "gdbus", "dbus-send", "dbus-monitor", "sh", "sleep", "tail"]

    @Test(.requires(.tools(DBusControlTests.tools))) func muteLongerThanADayIsRefusedAndMutesNothing() async throws {
        let s = try Setup()
        try await s.start()

        let tooLong = try s.gdbusCall("Mute", ["4294967295"])
        #expect(tooLong.status != 0)
        #expect(tooLong.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
        #expect(tooLong.stderr.contains("at most 86400 seconds"), "\(tooLong.stderr)")
        #expect(try s.gdbusCall("Mute", ["86401"]).status != 0)

        // Anything the refused call changed would reach the state file before this check's answer.
        #expect(try s.gdbusCall("Check").status == 0)
        await Harness.waitUntil("the check's answer in the state file") { s.stateFile.contains("checked") }
        #expect(s.stateFile.contains(#""muted_until":0"#), "\(s.stateFile)")

        // A whole day is allowed.
        #expect(try s.gdbusCall("Mute", ["86400"]).status == 0)
        await Harness.waitUntil("the mute in the state file") { !s.stateFile.contains(#""muted_until":0"#) }
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusControlTests.tools))) func fiftyConcurrentChecksShareOneProbe() async throws {
        let s = try Setup()
        try await s.start()
        let loop = MainLoopThread(name: "test-clients")
        // Fifty peers, each with its own connection, all connected before anyone calls.
        var clients: [BusConnection] = []
        for _ in 0..<50 {
            let c = try BusConnection.connect(address: s.bus.address)
            await c.attach(to: loop)
            clients.append(c)
        }
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for client in clients {
                group.addTask {
                    let m = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name, member: "Check")
                    return try await client.call(m, timeout: .seconds(20)).arguments().first?.string ?? "?"
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: "online", count: 50))
        #expect(s.recordedChecks == ["check"], "the monitor was asked \(s.recordedChecks.count) times")

        // The next call after the shared one is answered starts a fresh check.
        #expect(try s.gdbusCall("Check").stdout.contains("'online'"))
        #expect(s.recordedChecks.count == 2)
        clients.removeAll()
        loop.stop()
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusControlTests.tools))) func mutedUntilIsAPropertyThatFallsBackToZero() async throws {
        let s = try Setup()
        try await s.start()
        #expect(try s.getProperty("MutedUntil").contains("uint64 0"))
        let monitor = try BackgroundProcess(["dbus-monitor", "--session", "type='signal',path='\(Self.path)',member='PropertiesChanged'"],
                                            environment: s.env, output: URL(fileURLWithPath: s.daemon.path("monitor.txt")))
        defer { monitor.stop() }
        await Harness.waitUntil("dbus-monitor to start") { monitor.output.contains("member=NameLost") }
        func mutedUntilChanges() -> [String] {
            MonitoredSignal.parse(monitor.output).filter { $0.member == "PropertiesChanged" }.compactMap { $0.entry("MutedUntil") }
        }

        let before = Int64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(try s.gdbusCall("Mute", ["2"]).status == 0)
        await Harness.waitUntil("PropertiesChanged with the mute") { mutedUntilChanges().count >= 1 }
        let announced = try #require(mutedUntilChanges().first.flatMap { Int64($0.replacingOccurrences(of: "uint64 ", with: "")) })
        #expect(announced >= before + 2_000_000 && announced < before + 4_000_000)
        #expect(try s.getProperty("MutedUntil").contains("uint64 \(announced)"))
        let status = try s.gdbusCall("GetStatus").stdout
        #expect(status.contains("'muted_until': <uint64 \(announced)>"), "\(status)")
        // `status --json` says it too, from the state file (the front binary) and
        // from the full CLI.
        for binary in [Harness.binary, Harness.binary + "-cli"] {
            await Harness.waitUntil("\(binary) status --json shows the mute") {
                ((try? Harness.run([binary, "status", "--json"], environment: s.env).stdout) ?? "")
                    .contains("\"muted_until\":\(announced)")
            }
        }

        // The mute runs out by itself: the property says so without anyone asking.
        await Harness.waitUntil(timeout: .seconds(6), "PropertiesChanged back to 0") { mutedUntilChanges().count >= 2 }
        #expect(mutedUntilChanges() == ["uint64 \(announced)", "uint64 0"])
        #expect(try s.getProperty("MutedUntil").contains("uint64 0"))
        #expect(try s.gdbusCall("GetStatus").stdout.contains("'muted_until': <uint64 0>"))
        #expect(await s.daemon.stop() == 0)
    }
}

/// A session bus that can be stopped and started again on the same socket, as
/// when dbus-daemon is restarted under a running session.
final class RestartableBus: @unchecked Sendable {
    let directory: URL
    let socket: String
    var address: String { "unix:path=\(socket)" }
    private var process: Spawned?

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-rbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("bus").path
        try start()
    }

    func start() throws {
        try? FileManager.default.removeItem(atPath: socket)
        process = try Spawned(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"])
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket), clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        if !FileManager.default.fileExists(atPath: socket) { Issue.record("dbus-daemon did not create \(socket)") }
    }

    /// Stops the bus at once (SIGKILL), as when dbus-daemon dies under a session.
    func kill() {
        process?.kill()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension DBusControlTests {
    static func exec(_ argv: [String], _ env: [String: String]) -> (status: Int32, stdout: String, stderr: String) {
        (try? Harness.run(argv, environment: env)) ?? (-1, "", "cannot run \(argv[0])")
    }

    static func getStatus(_ env: [String: String]) -> (status: Int32, stdout: String, stderr: String) {
        exec(["gdbus", "call", "--session", "--timeout", "2", "--dest", name, "--object-path", path,
              "--method", "org.lifeline.Lifeline1.GetStatus"], env)
    }

    @Test(.requires(.tools(DBusControlTests.tools))) func aRestartedSessionBusIsPickedUpAgainBySameDaemon() async throws {
        let bus = try RestartableBus()
        let daemon = try DaemonFixture(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let observations = daemon.path("observations.jsonl")
        FileManager.default.createFile(atPath: observations, contents: Data(#"{"state":"online","interface":"eth0"}"#.utf8 + [10]))
        try daemon.writeConfig("""
            [[monitor]]
            kind = "exec"
            command = ["tail", "-n", "+1", "-f", "\(observations)"]

            [[sink]]
            kind = "dbus"
            """)
        try daemon.start()
        let pid = try #require(daemon.process?.pid)
        await Harness.waitUntil("GetStatus to answer online") { Self.getStatus(daemon.environment).stdout.contains("'state': <'online'>") }

        // Down long enough for several reconnection attempts, then back on the same path.
        bus.kill()
        await Harness.waitUntil("the daemon to notice") { daemon.daemonLog.contains("lost the session bus connection") }
        try await Task.sleep(for: .milliseconds(1500))
        try bus.start()
        await Harness.waitUntil(timeout: .seconds(8), "GetStatus to answer again") {
            Self.getStatus(daemon.environment).stdout.contains("'state': <'online'>")
        }
        #expect(daemon.process?.isRunning == true && daemon.process?.pid == pid)
        // The name is claimed again and the properties are served again.
        let state = Self.exec(["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path, "--method",
                               "org.freedesktop.DBus.Properties.Get", Self.name, "State"], daemon.environment)
        #expect(state.stdout.contains("<'online'>"), "\(state)")
        // Said once per outage, not once per attempt.
        let log = daemon.daemonLog
        #expect(log.components(separatedBy: "lost the session bus connection").count == 2, "\(log)")
        #expect(log.components(separatedBy: "cannot reach the session bus").count <= 2, "\(log)")

        // Logout: the bus goes and systemd sends SIGTERM; that is a clean stop.
        bus.kill()
        #expect(await daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusControlTests.tools))) func theUnitsBusNameIsOwnedWhateverTheSinks() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let unit = try String(contentsOf: root.appendingPathComponent("packaging/systemd/lifeline.service"), encoding: .utf8)
        let settings = unit.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // systemd counts a Type=dbus service as started once it owns BusName=.
        #expect(settings.contains("Type=dbus"))
        let busName = try #require(settings.first { $0.hasPrefix("BusName=") }.map { String($0.dropFirst("BusName=".count)) })

        let bus = try PrivateBus()
        let daemon = try DaemonFixture(extraEnvironment: bus.environment)
        let observations = daemon.path("observations.jsonl")
        FileManager.default.createFile(atPath: observations, contents: nil)
        // No `dbus` sink: only a log.
        try daemon.writeConfig("""
            [[monitor]]
            kind = "exec"
            command = ["tail", "-n", "+1", "-f", "\(observations)"]

            [[sink]]
            kind = "log"
            """)
        try daemon.start()
        await Harness.waitUntil("the daemon to own \(busName)") {
            Self.exec(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                       "org.freedesktop.DBus.NameHasOwner", "string:\(busName)"], bus.environment).stdout.contains("boolean true")
        }
        // The name is the single-instance lock whatever the config: a second daemon stops.
        let second = try BackgroundProcess([Harness.binary, "daemon"], environment: daemon.environment,
                                           output: URL(fileURLWithPath: daemon.path("second.log")))
        defer { second.stop() }
        await Harness.waitUntil("the second daemon to stop") { !second.process.isRunning }
        #expect(!second.process.isRunning && second.process.exitStatus == 3, "\(second.output)")
        #expect(daemon.process?.isRunning == true)
        #expect(await daemon.stop() == 0)
    }
}
