import Foundation
import LifelineDBus
import LifelineGLib
import Testing

/// org.lifeline.Lifeline1 read by real clients (gdbus, dbus-send,
/// dbus-monitor, `lifeline`) on a private bus per test, with transitions driven
/// by an exec monitor that follows a file of JSON observations.
@Suite struct DBusServiceTests {
    static let tools = ["dbus-daemon", "gdbus", "dbus-send", "dbus-monitor", "tail"]
    static let name = "org.lifeline.Lifeline1"
    static let path = "/org/lifeline/Lifeline1"

    /// A private bus and a daemon serving on it, fed from `observations`.
    final class Setup: @unchecked Sendable {
        let bus: PrivateBus
        let daemon: DaemonFixture
        let observations: String

        init() throws {
            bus = try PrivateBus()
            daemon = try DaemonFixture(extraEnvironment: bus.environment)
            observations = daemon.path("observations.jsonl")
            FileManager.default.createFile(atPath: observations, contents: nil)
            try daemon.writeConfig("""
                [debounce]
                down = "0s"
                up = "0s"

                [[monitor]]
                kind = "exec"
                command = ["tail", "-n", "+1", "-f", "\(observations)"]

                [[sink]]
                kind = "dbus"

                [[sink]]
                kind = "log"
                """)
        }

        var env: [String: String] { daemon.environment }

        func start() async throws {
            try daemon.start()
            await Harness.waitUntil("the daemon to own \(DBusServiceTests.name)") {
                daemon.daemonLog.contains("serving \(DBusServiceTests.name)")
            }
        }

        /// Appends observation lines for the exec monitor.
        func observe(_ lines: [String]) throws {
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: observations))
            try h.seekToEnd()
            try h.write(contentsOf: Data((lines.joined(separator: "\n") + "\n").utf8))
            try h.close()
        }

        func monitor(_ rule: String, _ file: String) async throws -> BackgroundProcess {
            let m = try BackgroundProcess(["dbus-monitor", "--session", rule], environment: env, output: URL(fileURLWithPath: daemon.path(file)))
            // dbus-monitor prints NameLost for itself once it has become a monitor.
            await Harness.waitUntil("dbus-monitor to start") { m.output.contains("member=NameLost") }
            return m
        }

        func run(_ argv: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try Harness.run(argv, environment: env)
        }

        func getProperty(_ name: String) throws -> String {
            try run(["dbus-send", "--session", "--print-reply", "--dest=\(DBusServiceTests.name)", DBusServiceTests.path,
                     "org.freedesktop.DBus.Properties.Get", "string:\(DBusServiceTests.name)", "string:\(name)"]).stdout
        }

        /// Waits until the service's `State` property is `state`: the service is
        /// updated on its own schedule, apart from the files.
        func waitForService(_ state: String, sourceLocation: SourceLocation = #_sourceLocation) async {
            await Harness.waitUntil("the service to say \(state)", sourceLocation: sourceLocation) {
                (try? getProperty("State"))?.contains("string \"\(state)\"") == true
            }
        }
    }

    static var packagedXML: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("packaging/dbus/org.lifeline.Lifeline1.xml"), encoding: .utf8)) ?? ""
    }

    /// The `<interface name="…">…</interface>` element of `xml`, as written.
    static func interfaceElement(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<interface name=\"\(name)\">"),
              let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex) else { return nil }
        return String(xml[start.lowerBound..<end.upperBound])
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func servesThePackagedInterfaceToRealClients() async throws {
        let s = try Setup()
        try await s.start()

        let introspect = try s.run(["dbus-send", "--session", "--print-reply=literal", "--dest=\(Self.name)", Self.path,
                                    "org.freedesktop.DBus.Introspectable.Introspect"])
        #expect(introspect.status == 0)
        let packaged = try #require(Self.interfaceElement(Self.name, in: Self.packagedXML))
        #expect(Self.interfaceElement(Self.name, in: introspect.stdout) == packaged)
        for standard in ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"] {
            #expect(introspect.stdout.contains("<interface name=\"\(standard)\">"))
        }

        let gdbus = try s.run(["gdbus", "introspect", "--session", "--dest", Self.name, "--object-path", Self.path])
        #expect(gdbus.status == 0)
        #expect(gdbus.stdout.contains("StateChanged(s state,"))
        #expect(gdbus.stdout.contains("readonly s State = 'unknown';"))
        #expect(gdbus.stdout.contains("readonly t Sequence = 0;"))

        // Parents introspect to their child, so `gdbus introspect --recurse` and d-spy find the object.
        let root = try s.run(["gdbus", "introspect", "--session", "--dest", Self.name, "--object-path", "/", "--recurse"])
        #expect(root.stdout.contains("interface org.lifeline.Lifeline1"))

        // No probe configured: Check() answers with the current state at once.
        let check = try s.run(["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path,
                               "--method", "org.lifeline.Lifeline1.Check"])
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "('unknown',)")

        #expect(try s.getProperty("State").contains("string \"unknown\""))
        let all = try s.run(["dbus-send", "--session", "--print-reply", "--dest=\(Self.name)", Self.path,
                             "org.freedesktop.DBus.Properties.GetAll", "string:\(Self.name)"]).stdout
        for p in ["State", "Previous", "Since", "Interface", "Kind", "Reason", "RttMs", "Metered", "Sequence"] {
            #expect(all.contains("string \"\(p)\""), "GetAll lacks \(p)")
        }
        let ping = try s.run(["dbus-send", "--session", "--print-reply", "--dest=\(Self.name)", Self.path, "org.freedesktop.DBus.Peer.Ping"])
        #expect(ping.status == 0)

        let mute = try s.run(["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path,
                              "--method", "org.lifeline.Lifeline1.Mute", "3600"])
        #expect(mute.status == 0)
        await Harness.waitUntil("the mute to reach the state file") {
            ((try? String(contentsOfFile: s.daemon.stateFilePath, encoding: .utf8)) ?? "").contains("\"muted_until\":1")
        }
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func everyTransitionIsASignalAndAPropertyChange() async throws {
        let s = try Setup()
        try await s.start()
        let monitor = try await s.monitor("type='signal',path='\(Self.path)'", "monitor.txt")
        let watch = try BackgroundProcess([Harness.binary, "watch", "--format", "json"], environment: s.env,
                                          output: URL(fileURLWithPath: s.daemon.path("watch.txt")))
        await Harness.waitUntil("watch to print the current state") { watch.lines.count >= 1 }

        func stateChanged() -> [MonitoredSignal] { MonitoredSignal.parse(monitor.output).filter { $0.member == "StateChanged" } }
        func propertiesChanged() -> [MonitoredSignal] { MonitoredSignal.parse(monitor.output).filter { $0.member == "PropertiesChanged" } }

        let steps = [
            #"{"state":"online","interface":"eth0","kind":"ethernet","reason":"probe answered","rtt_ms":12}"#,
            #"{"state":"offline","reason":"default route via eth0 removed"}"#,
            #"{"state":"limited","interface":"eth0","kind":"ethernet","reason":"probe timed out"}"#,
            #"{"state":"portal","interface":"eth0","kind":"ethernet","reason":"redirected","metered":true}"#,
            #"{"state":"online","interface":"eth0","kind":"ethernet","reason":"probe answered","rtt_ms":14}"#,
        ]
        for (n, step) in steps.enumerated() {
            try s.observe([step])
            await Harness.waitUntil("StateChanged #\(n + 1)") { stateChanged().count == n + 1 }
        }
        // Attribute-only: same state and interface, new rtt and reason.
        try s.observe([#"{"state":"online","interface":"eth0","kind":"ethernet","reason":"probe answered again","rtt_ms":20.5}"#])
        await Harness.waitUntil("PropertiesChanged for the new rtt") {
            propertiesChanged().contains { $0.entry("RttMs") == "double 20.5" }
        }
        // One more transition: had the attribute update sent a StateChanged, it would show before this one.
        try s.observe([#"{"state":"offline","reason":"carrier lost"}"#])
        await Harness.waitUntil("StateChanged #6") { stateChanged().count >= 6 }

        let signals = stateChanged()
        #expect(signals.map { $0.strings.first } == ["online", "offline", "limited", "portal", "online", "offline"])
        #expect(signals.map { $0.strings.dropFirst().first } == ["unknown", "online", "offline", "limited", "portal", "online"])
        #expect(signals.map { $0.entry("sequence") } == (1...6).map { "uint64 \($0)" })
        for signal in signals {
            #expect(signal.entries.map(\.0) == ["state", "previous", "since", "interface", "kind", "reason", "rtt_ms", "metered", "sequence",
                                                 "connection", "diagnosis", "families"])
        }
        try #require(signals.count == 6)
        #expect(signals[3].entry("metered") == "boolean true")
        #expect(signals[0].entry("rtt_ms") == "double 12")
        #expect(signals[0].entry("interface") == "string \"eth0\"")

        let changes = propertiesChanged()
        #expect(changes.allSatisfy { $0.strings.first == Self.name })
        #expect(changes.compactMap { $0.entry("Sequence") } == (1...6).map { "uint64 \($0)" })
        let attributeOnly = try #require(changes.first { $0.entry("RttMs") == "double 20.5" })
        #expect(attributeOnly.entry("Reason") == "string \"probe answered again\"")
        #expect(attributeOnly.entry("State") == nil && attributeOnly.entry("Sequence") == nil)

        #expect(try s.getProperty("Sequence").contains("uint64 6"))
        #expect(try s.getProperty("State").contains("string \"offline\""))
        #expect(try s.getProperty("Reason").contains("string \"carrier lost\""))

        // `lifeline watch`: the state at start, then one line per change, in order: each
        // StateChanged, and the attribute-only change (same sequence, the new rtt).
        await Harness.waitUntil("watch to print 8 lines") { watch.lines.count >= 8 }
        let watched = watch.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(watched.compactMap { $0["sequence"] as? Int } == [0, 1, 2, 3, 4, 5, 5, 6])
        #expect(watched.compactMap { $0["state"] as? String } == ["unknown", "online", "offline", "limited", "portal", "online", "online", "offline"])
        #expect(watched.count == 8 && (watched[6]["rtt_ms"] as? Double) == 20.5)
        // The log sink wrote the same transitions: one event stream, several surfaces.
        await s.daemon.waitForLogged(["online", "offline", "limited", "portal", "online", "offline"])
        watch.stop()
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func tenSubscribersSeeEverySignalInOrder() async throws {
        let s = try Setup()
        try await s.start()
        var monitors: [BackgroundProcess] = []
        for i in 0..<10 {
            monitors.append(try await s.monitor("type='signal',interface='\(Self.name)',member='StateChanged'", "subscriber\(i).txt"))
        }
        // Twenty transitions in one write: the bus publishes them back to back.
        let states = (0..<20).map { $0 % 2 == 0 ? "online" : "offline" }
        try s.observe(states.map { #"{"state":"\#($0)","interface":"\#($0 == "online" ? "eth0" : "")"}"# })
        for (i, m) in monitors.enumerated() {
            await Harness.waitUntil("subscriber \(i) to see 20 signals") {
                MonitoredSignal.parse(m.output).filter { $0.member == "StateChanged" }.count >= 20
            }
            let seen = MonitoredSignal.parse(m.output).filter { $0.member == "StateChanged" }
            #expect(seen.map { $0.entry("sequence") } == (1...20).map { "uint64 \($0)" }, "subscriber \(i)")
            #expect(seen.map { $0.strings.first ?? "" } == states, "subscriber \(i)")
        }
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func aSecondDaemonExits3AndNamesTheOwner() async throws {
        let s = try Setup()
        try await s.start()
        try s.observe([#"{"state":"online","interface":"eth0"}"#])
        await s.daemon.waitForLogged(["online"])
        await s.waitForService("online")
        let pid = try #require(s.daemon.process?.pid)

        // Same folders and bus: the second one must stop before it touches anything.
        let second = try Harness.run([Harness.binary, "daemon"], environment: s.env)
        #expect(second.status == 3)
        #expect(second.stderr.contains("another lifeline daemon owns org.lifeline.Lifeline1 (pid \(pid))"))
        // The first daemon's state file and service are untouched.
        #expect(FileManager.default.fileExists(atPath: s.daemon.stateFilePath))
        #expect(try s.getProperty("State").contains("string \"online\""))
        #expect(s.daemon.process?.isRunning == true)
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func aThousandWrongCallsLeaveTheDaemonServing() async throws {
        let s = try Setup()
        try await s.start()
        let client = try BusConnection.connect(address: s.bus.address)
        var rng = SystemRandomNumberGenerator()
        let wrongValues: [BusValue] = [
            .string("3600"), .int32(-1), .uint64(1 << 40), .double(1.5), .bool(true), .byte(7),
            .objectPath("/x"), .array(element: "u", [.uint32(1)]), .vardict([("seconds", .uint32(5))]),
            .variant(.uint32(60)), .structure([.uint32(1), .string("x")]),
        ]
        let allowed: Set<String> = [
            BusError.invalidArgs, BusError.unknownMethod, BusError.unknownObject, BusError.unknownInterface,
            BusError.unknownProperty, BusError.propertyReadOnly,
        ]
        // Strings a caller controls, up to a megabyte, with terminal escapes and invalid names in them.
        let hostile = [String(repeating: "x", count: 1 << 20), "\u{1b}]0;pwned\u{07}\u{1b}[2J" + String(repeating: "é", count: 5000),
                       "org.example." + String(repeating: "Long", count: 10_000)]
        func randomWrongCall() throws(BusError) -> BusMessage {
            let pick = Int.random(in: 0..<12, using: &rng)
            let value = wrongValues.randomElement(using: &rng)!
            switch pick {
            case 0:  // Mute with the wrong type or too many arguments
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name, member: "Mute")
                try m.append(Bool.random(using: &rng) ? [value] : [.uint32(5), value])
                return m
            case 1:  // Check / GetStatus / Introspect with arguments
                let (iface, member) = [(Self.name, "Check"), (Self.name, "GetStatus"),
                                       ("org.freedesktop.DBus.Introspectable", "Introspect")].randomElement(using: &rng)!
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: iface, member: member)
                try m.append(value)
                return m
            case 2:  // unknown methods, with and without an interface
                let member = "M" + String(UInt32.random(in: 0...UInt32.max, using: &rng), radix: 36)
                return try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                 interface: Bool.random(using: &rng) ? Self.name : nil, member: member)
            case 3:  // unknown interfaces
                return try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                 interface: "org.example.I\(Int.random(in: 0...999, using: &rng))", member: "Check")
            case 4:  // unknown objects
                return try BusMessage.methodCall(destination: Self.name, path: "/org/lifeline/Lifeline\(Int.random(in: 2...99, using: &rng))",
                                                 interface: Self.name, member: "GetStatus")
            case 5:  // Properties.Get of unknown properties or interfaces
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                  interface: "org.freedesktop.DBus.Properties", member: "Get")
                try m.append(.string(Bool.random(using: &rng) ? Self.name : "org.example.Nope"), .string("P\(Int.random(in: 0...99, using: &rng))"))
                return m
            case 6:  // Properties.Set on read-only properties
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                  interface: "org.freedesktop.DBus.Properties", member: "Set")
                try m.append(.string(Self.name), .string(["State", "Sequence", "RttMs"].randomElement(using: &rng)!), .variant(value))
                return m
            case 7:  // Properties methods with the wrong signature
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                  interface: "org.freedesktop.DBus.Properties",
                                                  member: ["Get", "GetAll", "Set"].randomElement(using: &rng)!)
                try m.append(value, value)
                return m
            case 8:  // GetAll of an unknown interface
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                  interface: "org.freedesktop.DBus.Properties", member: "GetAll")
                try m.append(.string("org.example.X\(Int.random(in: 0...99, using: &rng))"))
                return m
            case 9:  // Properties.Get with huge or hostile names
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path,
                                                  interface: "org.freedesktop.DBus.Properties", member: "Get")
                try m.append(.string(Bool.random(using: &rng) ? Self.name : hostile.randomElement(using: &rng)!),
                             .string(hostile.randomElement(using: &rng)!))
                return m
            case 10:  // huge strings where a number belongs, or as extra arguments
                let m = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name,
                                                  member: ["Mute", "Check", "GetStatus"].randomElement(using: &rng)!)
                try m.append(.string(hostile.randomElement(using: &rng)!))
                return m
            default:  // unknown methods on a very long object path
                let deep = String(repeating: "/a", count: Int.random(in: 1000...20_000, using: &rng))
                return try BusMessage.methodCall(destination: Self.name, path: deep, interface: Self.name, member: "GetStatus")
            }
        }
        var unexpected: [String] = []
        for _ in 0..<1000 {
            do {
                let reply = try client.callBlocking(try randomWrongCall(), timeout: .seconds(5))
                unexpected.append("a wrong call succeeded: \(reply.signature)")
            } catch {
                if !allowed.contains(error.name) { unexpected.append(String("\(error)".prefix(200))) }
                // The answer names what was wrong without echoing a caller's megabyte or escapes back.
                if error.message.utf8.count > 512 || error.message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    unexpected.append("unbounded error text (\(error.message.utf8.count) bytes): \(error.message.prefix(80).debugDescription)")
                }
            }
        }
        #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
        #expect(s.daemon.process?.isRunning == true)
        let status = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name, member: "GetStatus")
        #expect(try client.callBlocking(status).signature == "a{sv}")
        // A malformed call from a CLI client, too.
        let bad = try s.run(["dbus-send", "--session", "--print-reply", "--dest=\(Self.name)", Self.path,
                             "org.lifeline.Lifeline1.Mute", "string:forever"])
        #expect(bad.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
        #expect(await s.daemon.stop() == 0)
    }

    @Test(.requires(.tools(DBusServiceTests.tools))) func cliUsesTheServiceAndFallsBackToTheStateFile() async throws {
        let s = try Setup()
        try await s.start()
        try s.observe([#"{"state":"online","interface":"eth0","kind":"ethernet","reason":"probe answered"}"#])
        await s.daemon.waitForLogged(["online"])
        // The service is a surface of its own, updated on its own schedule: wait for it too.
        await s.waitForService("online")

        // Without the state file, the answer can only come from D-Bus.
        try FileManager.default.removeItem(atPath: s.daemon.stateFilePath)
        let status = try s.daemon.cli(["status", "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains(#""state":"online""#) && status.stdout.contains(#""interface":"eth0""#))
        let check = try s.daemon.cli(["check", "--format", "{state} {interface}"])
        #expect(check.status == 0)
        #expect(check.stdout == "online eth0\n")

        try s.observe([#"{"state":"offline","reason":"carrier lost"}"#])
        await s.daemon.waitForLogged(["online", "offline"])
        await s.waitForService("offline")
        #expect(try s.daemon.cli(["status"]).status == 1)
        #expect(try s.daemon.cli(["check"]).status == 1)

        // The bus gone: the daemon keeps running and `status` answers from the state file.
        s.bus.kill()
        await Harness.waitUntil("the daemon to notice") { s.daemon.daemonLog.contains("lost the session bus connection") }
        #expect(s.daemon.process?.isRunning == true)
        let fromFile = try s.daemon.cli(["status", "--format", "{state}"])
        #expect(fromFile.status == 1 && fromFile.stdout == "offline\n")
        // `check` needs the service: without a bus it says there is no daemon to ask.
        #expect(try s.daemon.cli(["check"]).status == 3)
        #expect(await s.daemon.stop() == 0)

        // No bus and no daemon: status says so with exit 3.
        #expect(try s.daemon.cli(["status"]).status == 3)
    }

    @Test(.requires(.tools(["tail"]))) func statusReadsTheStateFileWithoutABus() async throws {
        // DaemonFixture points DBUS_SESSION_BUS_ADDRESS at nothing.
        let daemon = try DaemonFixture()
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
        await Harness.waitUntil("online in the state file") {
            ((try? String(contentsOfFile: daemon.stateFilePath, encoding: .utf8)) ?? "").contains(#""state":"online""#)
        }
        let status = try daemon.cli(["status", "--format", "{state} {interface}"])
        #expect(status.status == 0)
        #expect(status.stdout == "online eth0\n")
        // The D-Bus sink without a bus is an error for its supervisor to retry, not the daemon's end.
        #expect(daemon.process?.isRunning == true)
        #expect(await daemon.stop() == 0)
    }
}

extension DBusServiceTests {
    @Test(.requires(.tools(DBusServiceTests.tools))) func asyncCallsFromAConnectionOnAGLibLoop() async throws {
        let s = try Setup()
        try await s.start()
        let loop = MainLoopThread(name: "test-client")
        do {
            let client = try BusConnection.connect(address: s.bus.address)
            await client.attach(to: loop)
            // Fifty calls in flight at once, none blocking a thread.
            let replies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let m = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name, member: "GetStatus")
                        return try await client.call(m, timeout: .seconds(5)).signature
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies == Array(repeating: "a{sv}", count: 50))
            // An error reply is thrown as the peer's D-Bus error.
            let wrong = try BusMessage.methodCall(destination: Self.name, path: Self.path, interface: Self.name, member: "Mute")
            try wrong.append(.string("soon"))
            await #expect(throws: BusError(name: BusError.invalidArgs, "Mute takes 'u', got 's'")) {
                _ = try await client.call(wrong, timeout: .seconds(5))
            }
        }
        loop.stop()
        #expect(await s.daemon.stop() == 0)
    }
}
