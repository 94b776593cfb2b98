import Foundation
import Testing

/// SIGKILL in the middle of a storm of transitions: the event log holds
/// whole lines only, numbered without a gap, and the next daemon carries the
/// numbers on past everything the killed one published.
@Suite(.serialized) struct FaultStormTests {
    func config(_ net: ScriptedNetwork) -> String {
        net.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"log\"")
    }

    func stateFileSequence(_ f: DaemonFixture) -> Int? {
        guard let data = FileManager.default.contents(atPath: f.stateFilePath),
              let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return nil }
        return json["sequence"] as? Int
    }

    /// The log's lines: each must parse as a JSON object; a line that does not is returned as torn.
    func readLog(_ f: DaemonFixture) throws -> (sequences: [Int], torn: [String], endsWithNewline: Bool) {
        let text = try String(contentsOfFile: f.eventLogPath, encoding: .utf8)
        var sequences: [Int] = [], torn: [String] = []
        for line in text.split(separator: "\n") {
            if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
               let sequence = object["sequence"] as? Int {
                sequences.append(sequence)
            } else {
                torn.append(String(line.prefix(200)))
            }
        }
        return (sequences, torn, text.isEmpty || text.hasSuffix("\n"))
    }

    /// A storm that never ends on its own: an exec monitor that says online and
    /// limited in turn for as long as it runs. Whenever the kill comes, it comes
    /// during the storm, whatever the machine's speed; the monitor dies with the daemon.
    static let endlessStorm = """
        [debounce]
        down = "0ms"
        up = "0ms"

        [[monitor]]
        kind = "exec"
        command = ["sh", "-c", "n=0; while :; do n=$((n + 1)); s=online; [ $((n % 2)) = 0 ] || s=limited; printf '{\\"state\\":\\"%s\\",\\"interface\\":\\"eth0\\",\\"reason\\":\\"storm %d\\"}\\n' $s $n; done"]

        [[sink]]
        kind = "log"
        """

    @Test(.requires(.tools(["tail", "sh"]))) func aKillDuringAStormLeavesWholeNumberedLines() async throws {
        let f = try DaemonFixture()
        try f.writeConfig(Self.endlessStorm)
        try f.start()
        defer { f.stopNow() }
        // Well into the storm, on both files; the log goes on growing until the kill.
        await Harness.waitUntil(timeout: .seconds(30), "the storm under way") {
            (stateFileSequence(f) ?? 0) >= 300 && ((try? readLog(f).sequences.count) ?? 0) >= 100
        }
        f.process?.signal(SIGKILL)
        await Harness.waitUntil("killed") { f.process?.isRunning == false }
        let publishedBeforeKill = stateFileSequence(f) ?? 0

        let log = try readLog(f)
        #expect(log.torn.isEmpty, "torn lines: \(log.torn)")
        #expect(log.endsWithNewline)
        #expect(log.sequences == (0..<log.sequences.count).map { $0 + 1 }, "a gap: \(Self.gaps(log.sequences))")
        #expect(log.sequences.count >= 100)
        let lastLogged = log.sequences.last ?? 0

        // A new daemon, on a fresh feed, starts from unknown and carries the numbers on.
        let next = ScriptedNetwork(fixture: f, name: "after.jsonl")
        try f.writeConfig(config(next))
        try f.start()
        let carried = max(lastLogged, publishedBeforeKill)
        print("FaultStormTests: killed with \(lastLogged) lines logged, \(publishedBeforeKill) published")
        await Harness.waitUntil("numbers carried on") { f.daemonLog.contains("sequence numbers continue after \(carried)") }
        try next.say("offline", reason: "after the kill")
        await Harness.waitUntil("logged after the restart") { (try? readLog(f).sequences.count) == lastLogged + 1 }
        let after = try readLog(f)
        #expect(after.torn.isEmpty)
        #expect(Array(after.sequences.prefix(lastLogged)) == log.sequences)
        #expect(after.sequences.last == carried + 1, "restarted at \(after.sequences.last ?? -1), killed one published \(carried)")
        #expect(f.loggedEvents().last?["state"] as? String == "offline")
        #expect(await f.stop() == 0)
    }

    /// A burst on a slow disk (each fsync made to take 20 ms): what waits is
    /// written together, one fsync for all of it, so the log is on disk soon
    /// after the burst is published and a crash then loses none of it. One fsync
    /// per line would trail the publication by 1000 × 20 ms, all of it lost to a crash meanwhile.
    @Test(.requires(.tools(["tail", "strace"]))) func aBurstOnASlowDiskIsLoggedSoonAfterItIsPublished() async throws {
        let f = try DaemonFixture()
        f.commandPrefix = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=fsync", "-e", "inject=fsync:delay_exit=20000",
                           "-o", "/dev/null"]
        let storm = ScriptedNetwork(fixture: f, name: "storm.jsonl")
        try f.writeConfig(config(storm))
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("state file") { stateFileSequence(f) != nil }
        var lines: [UInt8] = []
        for n in 1...1000 {
            lines += Array("{\"state\":\"\(n % 2 == 0 ? "online" : "limited")\",\"interface\":\"eth0\",\"reason\":\"burst \(n)\"}\n".utf8)
        }
        try storm.say(line: lines)
        await Harness.waitUntil(timeout: .seconds(30), "the burst published") { stateFileSequence(f) == 1000 }
        let published = ContinuousClock.now
        // A bound far above a few batched writes (20 ms each), well below 1000 of them (20 s).
        await Harness.waitUntil(timeout: .seconds(10), "the log caught up") { (try? readLog(f).sequences.count) == 1000 }
        let caughtUp = ContinuousClock.now - published

        // The crash: SIGKILL to the daemon itself (strace's child); strace ends with it.
        let tracer = try #require(f.process?.pid)
        let daemon = try #require(ProcessGauge(pid: tracer).children.first?.pid)
        kill(daemon, SIGKILL)
        await Harness.waitUntil("killed") { f.process?.isRunning == false }
        let log = try readLog(f)
        print("FaultStormTests: on a disk of 20 ms fsyncs, \(log.sequences.count) lines logged \(caughtUp) after the burst was published")
        #expect(log.torn.isEmpty)
        #expect(log.sequences == (0..<log.sequences.count).map { $0 + 1 }, "a gap: \(Self.gaps(log.sequences))")
        #expect(log.sequences.count == 1000, "\(1000 - log.sequences.count) published transitions lost to the crash")
    }

    static func gaps(_ s: [Int]) -> [(Int, Int)] {
        zip(s, s.dropFirst()).filter { $1 != $0 + 1 }.map { ($0, $1) }
    }
}
