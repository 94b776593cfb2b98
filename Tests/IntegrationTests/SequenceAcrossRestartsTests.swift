import Foundation
import Testing

/// Sequence numbers keep increasing when the daemon is restarted, so the log
/// never holds two lines with the same number and D-Bus clients never see it go back.
@Suite(.serialized) struct SequenceAcrossRestartsTests {
    func config(_ net: ScriptedNetwork) -> String {
        """
        [debounce]
        down = "0s"
        up = "0s"

        \(net.monitorTOML)

        [[sink]]
        kind = "log"
        """
    }

    func statusJSON(_ f: DaemonFixture) throws -> [String: Any] {
        let r = try f.cli(["status", "--json"])
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aRestartedDaemonContinuesTheSequence() async throws {
        let f = try DaemonFixture()
        let first = ScriptedNetwork(fixture: f, name: "first.jsonl")
        try f.writeConfig(config(first))
        try f.start()
        try first.say("online", interface: "eth0")
        await f.waitForLogged(["online"])
        try first.say("offline", reason: "cable pulled")
        await f.waitForLogged(["online", "offline"])
        #expect(await f.stop() == 0)

        // A second daemon, fed from a fresh script so it starts from unknown again.
        let second = ScriptedNetwork(fixture: f, name: "second.jsonl")
        try f.writeConfig(config(second))
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: f.stateFilePath) }
        // Before anything is published the daemon already carries the last number on.
        #expect(try statusJSON(f)["sequence"] as? Int == 2)
        try second.say("online", interface: "eth0")
        await f.waitForLogged(["online", "offline", "online"])

        let sequences = f.loggedEvents().compactMap { $0["sequence"] as? Int }
        #expect(sequences == [1, 2, 3])
        #expect(try statusJSON(f)["sequence"] as? Int == 3)
        #expect(f.daemonLog.contains("sequence numbers continue after 2"))
    }

    @Test func aCraftedHugeSequenceInTheLogIsIgnored() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(config(net))
        try FileManager.default.createDirectory(atPath: f.path("state/lifeline"), withIntermediateDirectories: true)
        try #"{"state":"online","previous":"unknown","since":1,"interface":"","kind":"unknown","reason":"","rtt_ms":-1,"metered":false,"sequence":18446744073709551615}"#
            .appending("\n").write(toFile: f.eventLogPath, atomically: true, encoding: .utf8)
        try f.start()
        defer { f.stopNow() }
        try net.say("offline", reason: "no route")
        await f.waitForLogged(["online", "offline"])
        #expect(f.loggedEvents().last?["sequence"] as? Int == 1)
        #expect(f.process?.isRunning == true)
    }
}
