import Foundation
import LifelineDBus
import Testing

/// A thousand malformed calls, from many connections that come and go and from
/// the command-line clients: each is answered with the D-Bus error that names
/// what was wrong, and the daemon's memory, descriptors and threads stay put.
@Suite(.serialized) struct FaultDBusTests {
    static let name = "org.lifeline.Lifeline1"
    static let path = "/org/lifeline/Lifeline1"

    /// One malformed call and what its answer must say.
    struct Wrong {
        var message: BusMessage
        var error: String
        /// Text the error's message must contain: the part of the call that was wrong.
        var names: String
    }

    static func wrongCall(_ n: Int) throws -> Wrong {
        let tag = String(n, radix: 36)
        switch n % 7 {
        case 0:
            let m = try BusMessage.methodCall(destination: name, path: path, interface: name, member: "Nope\(tag)")
            return Wrong(message: m, error: BusError.unknownMethod, names: "Nope\(tag)")
        case 1:
            let m = try BusMessage.methodCall(destination: name, path: path, interface: name, member: "Mute")
            try m.append(.string("for \(tag) hours"))
            return Wrong(message: m, error: BusError.invalidArgs, names: "Mute takes 'u', got 's'")
        case 2:
            let m = try BusMessage.methodCall(destination: name, path: path, interface: "org.example.Nope\(tag)", member: "Check")
            return Wrong(message: m, error: BusError.unknownInterface, names: "org.example.Nope\(tag)")
        case 3:
            let m = try BusMessage.methodCall(destination: name, path: "/org/lifeline/Nope\(tag)", interface: name, member: "GetStatus")
            return Wrong(message: m, error: BusError.unknownObject, names: "/org/lifeline/Nope\(tag)")
        case 4:
            // A megabyte (now and then; else 4 KiB) where no argument belongs.
            let m = try BusMessage.methodCall(destination: name, path: path, interface: name, member: "GetStatus")
            try m.append(.string(String(repeating: "x", count: n % 70 == 4 ? 1 << 20 : 4096)))
            return Wrong(message: m, error: BusError.invalidArgs, names: "GetStatus takes '', got 's'")
        case 5:
            let m = try BusMessage.methodCall(destination: name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get")
            try m.append(.string(name), .string("Nope\(tag)"))
            return Wrong(message: m, error: BusError.unknownProperty, names: "Nope\(tag)")
        default:
            let m = try BusMessage.methodCall(destination: name, path: path, interface: name, member: "Mute")
            try m.append(.uint32(60), .array(element: "s", [.string(tag)]))
            return Wrong(message: m, error: BusError.invalidArgs, names: "Mute takes 'u', got 'uas'")
        }
    }

    /// `count` malformed calls from connections of `perConnection` calls each,
    /// every connection closed after its calls; returns what was not as expected.
    static func sendWrongCalls(_ count: Int, perConnection: Int, address: String) throws -> [String] {
        var unexpected: [String] = []
        var n = 0
        while n < count {
            let client = try BusConnection.connect(address: address)
            for _ in 0..<perConnection where n < count {
                let wrong = try wrongCall(n)
                n += 1
                do {
                    let reply = try client.callBlocking(wrong.message, timeout: .seconds(5))
                    unexpected.append("call \(n) succeeded: \(reply.signature)")
                } catch {
                    if error.name != wrong.error || !error.message.contains(wrong.names) {
                        unexpected.append("call \(n): wanted \(wrong.error) naming \(wrong.names), got \(String(error.description.prefix(200)))")
                    }
                }
            }
        }
        return unexpected
    }

    @Test(.requires(.tools(["dbus-daemon", "gdbus", "dbus-send", "tail"]))) func aThousandMalformedCallsAreEachAnsweredAndCostNothing() async throws {
        let bus = try PrivateBus()
        let f = try DaemonFixture(extraEnvironment: bus.environment)
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(net.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"dbus\"\n[[sink]]\nkind = \"log\""))
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("serving") { f.daemonLog.contains("serving \(Self.name)") }
        try net.say("online", interface: "eth0")
        await f.waitForLogged(["online"])
        let gauge = try #require(f.gauge)

        // Warm up with the same mix (the allocator's pools reach the size a megabyte
        // argument needs, libdbus fills its caches), then measure.
        #expect(try Self.sendWrongCalls(500, perConnection: 10, address: bus.address).isEmpty)
        let before = (rss: gauge.residentKiB ?? 0, fds: gauge.descriptors ?? 0, threads: gauge.threads ?? 0)

        let unexpected = try Self.sendWrongCalls(1000, perConnection: 10, address: bus.address)
        #expect(unexpected.isEmpty, "\(unexpected.count) unexpected answers, first: \(unexpected.prefix(3))")

        // The command-line clients, each a connection of its own.
        let tools: [(argv: [String], says: String)] = [
            (["dbus-send", "--session", "--print-reply", "--dest=\(Self.name)", Self.path, "\(Self.name).Mute", "string:forever"],
             "Mute takes 'u', got 's'"),
            (["dbus-send", "--session", "--print-reply", "--dest=\(Self.name)", "/org/lifeline/Elsewhere", "\(Self.name).GetStatus"],
             "no object at /org/lifeline/Elsewhere"),
            (["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path, "--method", "org.example.Nope.Check"],
             "no interface org.example.Nope"),
            (["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path, "--method", "\(Self.name).Reboot"],
             "no method Reboot"),
            (["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path, "--method",
              "org.freedesktop.DBus.Properties.Set", Self.name, "State", "<'online'>"],
             "property State is read-only"),
        ]
        for _ in 0..<4 {
            for tool in tools {
                let r = try Harness.run(tool.argv, environment: f.environment)
                #expect(r.status != 0 && r.stderr.contains(tool.says), "\(tool.argv.joined(separator: " ")): \(r.stderr)")
            }
        }

        let after = (rss: gauge.residentKiB ?? 0, fds: gauge.descriptors ?? 0, threads: gauge.threads ?? 0)
        #expect(after.fds == before.fds, "descriptors \(before.fds) → \(after.fds)")
        // The cooperative pool starts and ends a thread now and then; a thread per caller would show.
        #expect(after.threads <= before.threads + 2, "threads \(before.threads) → \(after.threads)")
        // Less than 4 KiB a call; the allocator alone moved RSS by up to 1 MB between runs.
        #expect(after.rss - before.rss < 4096, "resident memory \(before.rss) → \(after.rss) KiB")
        print("FaultDBusTests: 1020 malformed calls; RSS \(before.rss) → \(after.rss) KiB, fds \(before.fds) → \(after.fds), threads \(before.threads) → \(after.threads)")

        // Still serving, and still publishing.
        try net.say("offline", reason: "after the storm of calls")
        await f.waitForLogged(["online", "offline"])
        let status = try Harness.run(["gdbus", "call", "--session", "--dest", Self.name, "--object-path", Self.path,
                                      "--method", "\(Self.name).GetStatus"], environment: f.environment)
        #expect(status.stdout.contains("'offline'"), "\(status)")
        #expect(await f.stop() == 0)
    }
}
