import Foundation
import InMemoryLogging
import LifelineCore
import LifelineFormats
import LifelinePlatform
import LifelineTestKit
import Logging
import Synchronization
import Testing
@testable import LogSink

@Suite struct LogSinkTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("logsink-\(UUID().uuidString.prefix(8))").path

    func context() -> PluginContext {
        PluginContext(name: "sink log", logger: .init(label: "test"),
                      paths: Paths(configHome: dir, stateHome: dir + "/state", runtimeDir: dir + "/run"),
                      control: Bus(clock: ContinuousClock()))
    }

    func event(_ state: ConnectivityState, _ seq: UInt64, reason: String = "r") -> Update {
        Update(event: StateEvent(state: state, previous: .online, since: 1_700_000_000_000_000 + Int64(seq),
                                 interface: "eth0", kind: .ethernet, reason: reason, rttMs: 12.5, sequence: seq),
               isTransition: true)
    }

    /// Runs the sink over `updates` until it has taken them all.
    func write(_ updates: [Update], config: LogSink.Config) async throws -> LogSink {
        let sink = try LogSink(config: config, context: context())
        let mailbox = Mailbox(policy: LogSink.delivery)
        for u in updates { mailbox.post(u) }
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        while mailbox.backlog > 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        mailbox.close()
        try await task.value
        return sink
    }

    @Test func writesOneLineWithEveryFieldPerTransitionToTheDefaultPath() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let startup = Update(event: .initial(at: 1), isTransition: false)
        var attributes = event(.online, 1)
        attributes.isTransition = false
        let sink = try await write([startup, event(.online, 1), attributes, event(.offline, 2, reason: "cable \"pulled\"\n")],
                                   config: LogSink.Config())
        #expect(sink.path == dir + "/state/lifeline/events.jsonl")
        let lines = try String(contentsOfFile: sink.path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let second = try #require(JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(Set(second.keys) == Set(StateEvent.CodingKeys.allCases.map(\.rawValue)))
        #expect(second["state"] as? String == "offline")
        #expect(second["reason"] as? String == "cable \"pulled\"\n")
        #expect(second["rtt_ms"] as? Double == 12.5)
        #expect(second["sequence"] as? Int == 2)
        // Private: only the user reads where they have been offline.
        let mode = try FileManager.default.attributesOfItem(atPath: sink.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let dirMode = try FileManager.default.attributesOfItem(atPath: dir + "/state/lifeline")[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
    }

    @Test func rotatesBySizeKeepingNFiles() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/log/events.jsonl"
        let updates = (1...60).map { event($0 % 2 == 0 ? .offline : .online, UInt64($0), reason: String(repeating: "x", count: 100)) }
        _ = try await write(updates, config: LogSink.Config(path: path, maxSize: 1024, keep: 2))
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: path))
        #expect(fm.fileExists(atPath: path + ".1"))
        #expect(fm.fileExists(atPath: path + ".2"))
        #expect(!fm.fileExists(atPath: path + ".3"))
        for file in [path, path + ".1", path + ".2"] {
            let size = try fm.attributesOfItem(atPath: file)[.size] as? Int ?? 0
            #expect(size <= 1024)
        }
        // Newest last: the current file ends with the last transition; reading back in order works.
        let read = EventLog.read(path: path, keep: 2)
        #expect(read.badLines == 0)
        #expect(read.events.last?.sequence == 60)
        #expect(read.events.map(\.sequence) == read.events.map(\.sequence).sorted())
    }

    @Test func aFailedWriteIsRetriedAndNothingAfterItIsLost() async throws {
        let file = FailingFile(failures: 3)
        let sink = LogSink(config: LogSink.Config(), context: context()) { file }
        let mailbox = Mailbox(policy: LogSink.delivery)
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        // The first write fails; more transitions arrive while the sink waits to retry.
        mailbox.post(event(.offline, 1))
        while file.attempts.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        for n in 2...5 { mailbox.post(event(n % 2 == 0 ? .online : .offline, UInt64(n))) }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while file.lines.withLock({ $0.count }) < 5, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        mailbox.close()
        try await task.value  // the sink itself never gave up
        let sequences = file.lines.withLock { $0 }.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["sequence"] as? Int
        }
        #expect(sequences == [1, 2, 3, 4, 5])
        // Three failures and the first line, then the four that waited meanwhile in one write.
        #expect(file.attempts.withLock { $0 } == 5)
    }

    @Test func pastItsBoundTheWaitingLogSaysHowManyTransitionsItDropped() async throws {
        let file = FailingFile(failures: Int.max)
        let handler = InMemoryLogHandler()
        var context = context()
        context.logger = Logger(label: "test") { _ in handler }
        let sink = LogSink(config: LogSink.Config(), context: context) { file }
        let mailbox = Mailbox(policy: LogSink.delivery)
        let task = Task { try await sink.run(updates: SinkUpdates(mailbox)) }
        mailbox.post(event(.offline, 1))
        while file.attempts.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .everyTransition(let capacity) = LogSink.delivery else { Issue.record("the log must see every transition"); return }
        // The disk stays full while more transitions arrive than the log may hold.
        for n in 2...(capacity + 6) { mailbox.post(event(n % 2 == 0 ? .online : .offline, UInt64(n))) }
        let clock = ContinuousClock()
        var deadline = clock.now + .seconds(5)
        let said = "log sink fell behind: 5 transitions were not written to \(sink.path)"
        while !handler.entries.contains(where: { $0.message.description == said }), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(handler.entries.contains { $0.level == .error && $0.message.description == said })
        // Space again: the one in hand and everything kept after it are written.
        file.heal()
        deadline = clock.now + .seconds(5)
        while file.lines.withLock({ $0.count }) < capacity + 1, clock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        mailbox.close()
        try await task.value
        let sequences = file.lines.withLock { $0 }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["sequence"] as? Int
        }
        #expect(sequences == [1] + Array(7...(capacity + 6)))
    }

    @Test func aLineWrittenInPartIsCutBackSoTheRetryStartsOnItsOwnLine() throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/events.jsonl"
        let calls = Mutex(0)
        let file = RotatingFile(path: path, maxSize: 1 << 20, keep: 1) { fd, bytes, path in
            if calls.withLock({ n in defer { n += 1 }; return n }) == 1 {
                // The second line: half of it reaches the disk, then the disk is full.
                try Files.writeAll(fd, bytes.prefix(bytes.count / 2), path: path)
                throw Files.Error(path: path, operation: "cannot write", errno: ENOSPC)
            }
            try Files.writeAll(fd, bytes, path: path)
        }
        try file.append(line: "{\"sequence\":1}\n")
        #expect(throws: Files.Error.self) { try file.append(line: "{\"sequence\":2,\"reason\":\"long enough\"}\n") }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"sequence\":1}\n")
        try file.append(line: "{\"sequence\":2,\"reason\":\"long enough\"}\n")
        try file.append(line: "{\"sequence\":3}\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8)
                == "{\"sequence\":1}\n{\"sequence\":2,\"reason\":\"long enough\"}\n{\"sequence\":3}\n")
    }

    @Test func aLineTornByACrashIsCutWhenTheLogIsOpened() throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/events.jsonl"
        try "{\"sequence\":1}\n{\"sequence\":2,\"sta".write(toFile: path, atomically: true, encoding: .utf8)
        let file = RotatingFile(path: path, maxSize: 1 << 20, keep: 1)
        try file.append(line: "{\"sequence\":2}\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"sequence\":1}\n{\"sequence\":2}\n")
    }

    @Test func everyTransitionWaitsForTheLogWhileAttributesCoalesce() async {
        let mailbox = Mailbox(policy: LogSink.delivery)
        for n in 1...10 {
            mailbox.post(event(.online, UInt64(n)))
            var attr = event(.online, UInt64(n))
            attr.isTransition = false
            mailbox.post(attr)
            mailbox.post(attr)
        }
        // Every transition waits in order; an attribute update is absorbed by
        // the next transition, and only the last one waits on its own.
        #expect(mailbox.backlog == 11)
        var taken: [Update] = []
        while mailbox.backlog > 0, let u = await mailbox.next() { taken.append(u) }
        #expect(taken.filter(\.isTransition).map(\.event.sequence) == Array(1...10))
        #expect(taken.last?.isTransition == false)
    }

    @Test func historyFindsOutagesAcrossRestarts() {
        func e(_ s: ConnectivityState, _ prev: ConnectivityState, _ t: Int64) -> StateEvent {
            StateEvent(state: s, previous: prev, since: t * 1_000_000, reason: "\(s)", sequence: 1)
        }
        let outages = OutageHistory.outages(from: [
            e(.online, .unknown, 0), e(.offline, .online, 10), e(.portal, .offline, 20), e(.online, .portal, 70),
            e(.limited, .online, 100), e(.offline, .unknown, 110),  // daemon restarted mid-outage
            e(.online, .offline, 200), e(.offline, .online, 300),
        ])
        #expect(outages.count == 3)
        #expect(outages[0] == OutageRecord(start: 10_000_000, end: 70_000_000, worst: .offline, reason: "offline"))
        #expect(outages[1].start == 100_000_000 && outages[1].end == 200_000_000 && outages[1].worst == .offline)
        #expect(outages[2].end == nil)
        #expect(outages[0].duration(now: 0) == .seconds(60))
    }
}

@Suite struct FilesTests {
    @Test func atomicReplaceNeverWritesThroughAPlantedSymlink() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("files-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim"
        try "untouched".write(toFile: victim, atomically: true, encoding: .utf8)
        let target = dir + "/state.json"
        try FileManager.default.createSymbolicLink(atPath: target + ".tmp.\(getpid())", withDestinationPath: victim)
        try Files.replaceAtomically(target, with: "{\"state\":\"online\"}\n")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "{\"state\":\"online\"}\n")
        let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

/// A log file whose first `failures` writes fail, as on a full disk.
final class FailingFile: LineFile {
    let failures: Int
    private let healed = Mutex(false)
    let attempts = Mutex(0)
    let lines = Mutex<[String]>([])

    init(failures: Int) { self.failures = failures }

    /// The disk has room again: every write from now on succeeds.
    func heal() { healed.withLock { $0 = true } }

    func append(line: String) throws {
        let attempt = attempts.withLock { n in
            defer { n += 1 }
            return n
        }
        if attempt < failures, !healed.withLock({ $0 }) { throw Files.Error(path: "/full/disk", operation: "cannot write", errno: ENOSPC) }
        // A batch of lines comes as one write; each is kept on its own.
        lines.withLock { $0 += line.split(separator: "\n").map { String($0) + "\n" } }
    }
}
