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

    @Test(.requires(.rootAnd(["mount", "umount", "dd"]))) func aFullDiskLosesNoTransitionAndTearsNoLine() async throws {
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
        defer { f.stopNow() }
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

    @Test(.requires(.tools(["strace"]))) func creatingAndRotatingTheLogSyncsItsFolder() async throws {
        let f = try DaemonFixture()
        let trace = f.path("trace.txt")
        // strace runs the daemon and records the calls that decide durability.
        f.commandPrefix = ["strace", "-f", "-qq", "-e", "trace=openat,fsync,rename,renameat,renameat2", "-o", trace]
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig("""
            [debounce]
            down = "0s"
            up = "0s"

            \(net.monitorTOML)

            [[sink]]
            kind = "log"
            max_size = 2048
            keep = 2
            """)
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("state file") { stateFileSequence(f) != nil }
        for n in 1...12 { try await publish(net, f, n) }
        await Harness.waitUntil("rotated") { FileManager.default.fileExists(atPath: f.eventLogPath + ".1") }
        // However long a line is, the three files `keep = 2` allows hold all twelve.
        await Harness.waitUntil("twelve lines") {
            EventLogReading.sequences(f.eventLogPath + ".2") + EventLogReading.sequences(f.eventLogPath + ".1")
                + EventLogReading.sequences(f.eventLogPath) == Array(1...12)
        }

        // Stop the daemon itself (strace's child); strace then ends with it.
        let tracer = try #require(f.process?.pid)
        let children = (try? String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8)) ?? ""
        let daemon = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
        kill(daemon, SIGTERM)
        #expect(await f.stop(signal: 0) == 0)

        let calls = Self.wholeCalls(try String(contentsOfFile: trace, encoding: .utf8))
        let folder = f.path("state/lifeline")
        /// Whether, after the first call containing `marker`, the folder is opened and that descriptor fsync'd.
        func folderSynced(after marker: String) -> Bool {
            guard let start = calls.firstIndex(where: { $0.contains(marker) }) else { return false }
            var folderFDs: Set<String> = []
            for call in calls[start...] {
                if call.contains("openat("), call.contains("\"\(folder)\""), call.contains("O_DIRECTORY"),
                   let fd = call.split(separator: "=").last?.trimmingCharacters(in: .whitespaces) {
                    folderFDs.insert(fd)
                }
                if folderFDs.contains(where: { call.contains("fsync(\($0))") && call.hasSuffix("= 0") }) { return true }
            }
            return false
        }
        #expect(folderSynced(after: "\"\(f.eventLogPath)\", O_RDWR|O_CREAT|O_APPEND|O_CLOEXEC"), "creation:\n\(calls.joined(separator: "\n"))")
        #expect(folderSynced(after: "\"\(f.eventLogPath)\", \"\(f.eventLogPath).1\""), "rotation:\n\(calls.joined(separator: "\n"))")
    }
}

extension EventLogDurabilityTests {
    @Test func straceCallsSplitByAnotherThreadAreJoined() {
        let text = """
            101   fsync(26 <unfinished ...>
            102   openat(AT_FDCWD, "/x", O_RDONLY) = 7
            101   <... fsync resumed>) = 0
            """
        #expect(Self.wholeCalls(text) == ["102   openat(AT_FDCWD, \"/x\", O_RDONLY) = 7", "101 fsync(26) = 0"])
    }

    /// strace's lines with each call whole: when another thread runs meanwhile,
    /// `strace -f` splits a call into "PID fsync(26 <unfinished ...>" and, later,
    /// "PID <... fsync resumed>) = 0".
    static func wholeCalls(_ text: String) -> [String] {
        var unfinished: [Substring: Substring] = [:]
        var calls: [String] = []
        for line in text.split(separator: "\n") {
            // "PID  call…": the pid, then one or more spaces.
            let parts = line.drop(while: { $0 == " " }).split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else {
                calls.append(String(line))
                continue
            }
            let (pid, rest) = (parts[0], parts[1].drop(while: { $0 == " " }))
            if rest.hasSuffix("<unfinished ...>") {
                var start = rest.dropLast("<unfinished ...>".count)
                while start.last == " " { start = start.dropLast() }
                unfinished[pid] = start
            } else if rest.hasPrefix("<... "), let resumed = rest.range(of: " resumed>"),
                      let start = unfinished.removeValue(forKey: pid) {
                calls.append("\(pid) \(start)\(rest[resumed.upperBound...])")
            } else {
                calls.append(String(line))
            }
        }
        return calls
    }
}

/// Sequence numbers of an event log file, in order.
enum EventLogReading {
    static func sequences(_ path: String) -> [Int] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?["sequence"] as? Int
        }
    }
}
