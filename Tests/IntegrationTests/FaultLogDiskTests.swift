import Foundation
import Testing

/// The event log's folder on a tiny tmpfs that fills up. Chosen behaviour: the
/// log sink keeps the transitions it could not write (a bounded queue of 4096;
/// past that it drops the oldest and says how many) and writes them, in order,
/// once there is room again. Meanwhile the daemon goes on publishing on D-Bus,
/// and says once that the disk is full, not once per transition.
@Suite(.serialized) struct FaultLogDiskTests {
    static let name = "org.lifeline.Lifeline1"

    @Test(.requires(.rootAnd(["mount", "umount", "dd", "dbus-daemon", "dbus-monitor", "tail"]))) func aFullLogDiskKeepsTheDaemonPublishingAndLogsOnceWhenSpaceReturns() async throws {
        let bus = try PrivateBus()
        let f = try DaemonFixture(extraEnvironment: bus.environment)
        let disk = f.path("state")
        let mounted = try Harness.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", disk])
        try #require(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? Harness.run(["umount", "-l", disk]) }
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(net.config(debounceMs: 0, sinks: """
            [[sink]]
            kind = "log"
            [[sink]]
            kind = "dbus"
            """))
        let signals = try BackgroundProcess(
            ["dbus-monitor", "--session", "type='signal',interface='\(Self.name)',member='StateChanged'"],
            environment: bus.environment, output: URL(fileURLWithPath: f.path("signals.log")))
        await Desktop.waitUntilMonitoring(signals)
        defer { signals.stop() }
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("serving") { f.daemonLog.contains("serving \(Self.name)") }
        var published = 0
        func step() async throws {
            published += 1
            try net.say(published % 2 == 0 ? "online" : "limited", interface: "eth0", reason: "step \(published)")
            let expected = published
            await Harness.waitUntil("StateChanged \(expected)") {
                MonitoredSignal.parse(signals.output).filter { $0.member == "StateChanged" }.count == expected
            }
        }
        for _ in 1...5 { try await step() }
        await Harness.waitUntil("five lines") { f.loggedEvents().count == 5 }

        // Fill the disk to the last byte; the transitions go on.
        let filler = disk + "/filler"
        _ = try? Harness.run(["dd", "if=/dev/zero", "of=\(filler)", "bs=4k"])
        while !f.daemonLog.contains("No space left on device"), published < 100 { try await step() }
        #expect(f.daemonLog.contains("No space left on device"), "the disk never filled:\n\(f.daemonLog)")
        let linesWhenFull = f.loggedEvents().count
        for _ in 1...30 { try await step() }
        #expect(f.loggedEvents().count == linesWhenFull, "lines were written to a full disk")
        #expect(f.process?.isRunning == true)

        // Space returns: the kept transitions are written, in order, each line whole.
        try FileManager.default.removeItem(atPath: filler)
        await Harness.waitUntil(timeout: .seconds(5), "every transition in the log") {
            f.loggedEvents().compactMap { $0["sequence"] as? Int } == Array(1...published)
        }
        for _ in 1...3 { try await step() }
        await Harness.waitUntil("logging goes on") {
            f.loggedEvents().compactMap { $0["sequence"] as? Int } == Array(1...published)
        }
        let text = try String(contentsOfFile: f.eventLogPath, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "torn line: \(line)")
        }
        // One error for the whole full period, one word when it is over.
        let full = f.logLines(containing: "No space left on device")
        #expect(full.count == 1, "\(full)")
        #expect(f.logLines(containing: "again after").count == 1, "\(f.daemonLog)")
        #expect(f.logLines(containing: "fell behind").isEmpty)
        #expect(await f.stop() == 0)
    }
}
