import Foundation
import Testing

/// The event log against a real disk that fills up: the daemon keeps every
/// published transition and writes it once space returns, in whole lines.
@Suite(.serialized) struct EventLogDurabilityTests {
    func stateFileSequence(_ f: DaemonFixture) -> Int? {
        guard let data = FileManager.default.contents(atPath: f.stateFilePath),
              let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return nil }
        return json["sequence"] as? Int
    }

    /// Says one state change and waits (bounded) until the daemon has published it.
    func publish(_ net: ScriptedNetwork, _ f: DaemonFixture, _ n: Int) async throws {
        let before = stateFileSequence(f) ?? 0
        try net.say(n % 2 == 0 ? "online" : "limited", interface: "eth0", reason: "step \(n)")
        await Harness.waitUntil("transition \(n) published") { (stateFileSequence(f) ?? 0) > before }
    }

    @Test func aFullDiskLosesNoTransitionAndTearsNoLine() async throws {
        guard Harness.available(.rootAnd(["mount", "umount", "dd"])) else { return }
        let f = try DaemonFixture()
        let disk = f.path("state")
        // A disk of 128 KiB the test can fill: the daemon's log lives on it.
        let mounted = try Harness.run(["mount", "-t", "tmpfs", "-o", "size=128k,mode=0700", "tmpfs", disk])
        try #require(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? Harness.run(["umount", "-l", disk]) }
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig("""
            [debounce]
            down = "0s"
            up = "0s"

            \(net.monitorTOML)

            [[sink]]
            kind = "log"
            """)
        try f.start()
        defer { Task { await f.stop() } }
        await Harness.waitUntil("state file") { stateFileSequence(f) != nil }

        for n in 1...10 { try await publish(net, f, n) }
        await Harness.waitUntil("ten lines") { f.loggedEvents().count == 10 }

        // Fill the disk to the last byte (dd stops with "No space left on device").
        let filler = disk + "/filler"
        _ = try? Harness.run(["dd", "if=/dev/zero", "of=\(filler)", "bs=4k"])
        var n = 10
        // Transitions keep coming while the disk is full, more than one per retry.
        while !f.daemonLog.contains("No space left on device"), n < 200 {
            n += 1
            try await publish(net, f, n)
        }
        #expect(f.daemonLog.contains("No space left on device"), "the disk never filled: \(f.daemonLog)")
        for _ in 1...20 {
            n += 1
            try await publish(net, f, n)
        }

        try FileManager.default.removeItem(atPath: filler)
        for _ in 1...5 {
            n += 1
            try await publish(net, f, n)
        }
        let published = try #require(stateFileSequence(f))
        #expect(published == n)
        await Harness.waitUntil(timeout: .seconds(5), "every transition in the log") {
            f.loggedEvents().compactMap { $0["sequence"] as? Int } == Array(1...published)
        }

        // Every line whole: each parses and the file ends with a newline.
        let text = try String(contentsOfFile: f.eventLogPath, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines {
            let parsed = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(parsed != nil, "torn line: \(line)")
        }
        #expect(lines.count == published)
        #expect(await f.stop() == 0)
    }
}
