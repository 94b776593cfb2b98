import Foundation
import LifelineCore
import LifelinePlatform
import LifelineTestKit
import Logging
import Synchronization
import Testing
@testable import ExecMonitor

@Suite struct ExecLineTests {
    @Test func parsesEveryField() throws {
        let line = #"{"state":"online","interface":"wlan0","kind":"wifi","reason":"probe ok","rtt_ms":12.5,"metered":true}"#
        let o = try ExecLine.parse(line, role: .reachability).get()
        #expect(o == Observation(role: .reachability, state: .online, interface: "wlan0", kind: .wifi,
                                 reason: "probe ok", rttMs: 12.5, metered: true))
        #expect(try ExecLine.parse(#"{"state":"offline"}"#, role: .link).get().role == .link)
    }

    @Test(arguments: [
        ("", "not a JSON object"),
        ("garbage", "not a JSON object"),
        ("{\"state\":", "not valid JSON"),
        (#"{"interface":"eth0"}"#, "missing \"state\""),
        (#"{"state":"sideways"}"#, "unknown state 'sideways' (known: offline, limited, portal, online)"),
        (#"{"state":"unknown"}"#, "unknown state 'unknown'"),
        (#"{"state":42}"#, "\"state\" has the wrong type"),
        (#"{"state":"online","kind":"carrier-pigeon"}"#, "unknown kind 'carrier-pigeon'"),
        (#"{"state":"online","rtt_ms":-3}"#, "rtt_ms must be a number ≥ 0"),
        (#"{"state":"online","metered":"yes"}"#, "\"metered\" has the wrong type"),
        (#"{"state":"online","rtt_ms":[12]}"#, "\"rtt_ms\" has the wrong type"),
        (#"{"state":null}"#, "missing \"state\""),
        (#"{"state":"online"} and more"#, "not valid JSON"),
    ])
    func malformedLinesAreRefusedWithAReason(line: String, reason: String) {
        switch ExecLine.parse(line, role: .reachability) {
        case .success(let o): Issue.record("accepted \(line) as \(o)")
        case .failure(let e): #expect(e.description.contains(reason), "\(e)")
        }
    }

    @Test func membersItDoesNotKnowAreIgnoredAndNullIsAbsent() throws {
        let line = #"{"version":2,"extra":{"nested":[1,2]},"state":"limited","reason":null,"metered":null}"#
        let o = try ExecLine.parse(line, role: .reachability).get()
        #expect(o.state == .limited)
        #expect(o.reason == "reported by exec monitor")
        #expect(o.metered == nil)
    }

    @Test func lineSplitterDropsOverlongLinesAndKeepsTheRest() {
        var s = LineSplitter(maxLength: 8)
        var lines = s.feed(Array("short\n0123456789abc".utf8))
        lines += s.feed(Array("def\nok\n".utf8))
        #expect(lines == [.text("short"), .tooLong(16), .text("ok")])
        #expect(s.feed(Array("par".utf8)).isEmpty)
        #expect(s.feed(Array("tial\n".utf8)) == [.text("partial")])
    }
}

@Suite struct ExecMonitorRunTests {
    @Test func publishesEachValidLineAndFailsWhenTheProgramExits() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("exec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("monitor.sh").path
        try """
            #!/bin/sh
            echo '{"state":"online","interface":"eth0","reason":"up"}'
            echo 'not json'
            echo '{"state":"offline","reason":"down"}'
            exit 7
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)

        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let mailbox = bus.attachSink(policy: .everyTransition(capacity: 10))
        let context = PluginContext(name: "monitor exec", logger: .init(label: "t"),
                                    paths: Paths.fromEnvironment(), control: bus)
        let monitor = try ExecMonitor(config: .init(command: [script]), context: context)
        await #expect(throws: ExecMonitor.Exited.self) {
            try await monitor.run(handle: bus.makeMonitorHandle(name: "exec"))
        }
        var states: [ConnectivityState] = []
        while mailbox.backlog > 0, let u = await mailbox.next() {
            if u.isTransition { states.append(u.event.state) }
        }
        #expect(states == [.online, .offline])
        #expect(bus.current.reason == "down")
    }
}

@Suite struct ExecMonitorCheckTests {
    @Test func checkRequestsReachTheProgramOnStdinAndCheckWaitsForItsAnswer() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("exec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("checker.sh").path
        try """
            #!/bin/sh
            echo '{"state":"online","interface":"eth0","reason":"first look"}'
            n=0
            while read -r line; do
              n=$((n + 1))
              [ "$line" = check ] && echo "{\\"state\\":\\"portal\\",\\"interface\\":\\"eth0\\",\\"reason\\":\\"check $n\\"}"
            done
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)

        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .seconds(60), up: .seconds(60)))
        let context = PluginContext(name: "monitor exec", logger: .init(label: "t"), paths: Paths.fromEnvironment(), control: bus)
        let monitor = try ExecMonitor(config: .init(command: [script], checks: true), context: context)
        let handle = bus.makeMonitorHandle(name: "exec")
        let running = Task { try await monitor.run(handle: handle) }
        defer { running.cancel() }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while bus.current.state != .online, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(bus.current.state == .online)

        // The explicit check is answered by the program and published at once, debounce or not.
        let after = await bus.check(timeout: .seconds(5))
        #expect(after.state == .portal)
        #expect(after.reason == "check 1")
    }
}

/// What a program prints is cleaned where it enters: bounded, no control
/// characters, invalid UTF-8 replaced; an error quoting a bad line shows its
/// control characters instead of sending them to the daemon's log.
@Suite struct ExecTextTests {
    func observation(_ bytes: [UInt8]) throws -> Observation {
        var splitter = LineSplitter(maxLength: ExecMonitor.maxLineLength)
        let lines = splitter.feed(bytes + [UInt8(ascii: "\n")])
        guard case .text(let text) = try #require(lines.first) else { throw ExecLine.Invalid(description: "too long") }
        return try ExecLine.parse(text, role: .reachability).get()
    }

    func line(reason: String, interface: String) throws -> [UInt8] {
        let object = ["state": "limited", "reason": reason, "interface": interface]
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    @Test func reasonsAndInterfacesAreCleanedAndBounded() throws {
        let cases: [(value: String, reason: String, interface: String)] = [
            ("<b>x</b>", "<b>x</b>", "<b>x</b>"),
            ("#(touch /tmp/pwned) %Y 100%", "#(touch /tmp/pwned) %Y 100%", "#(touch /tmp/pwned) %Y 100%"),
            ("\u{1b}]0;title\u{07}", " ]0;title ", "]0;title"),
            ("\u{1b}[2J", " [2J", "[2J"),
            ("two\nlines\u{0}\u{7f}\u{9b}", "two lines   ", "twolines"),
        ]
        for (value, reason, interface) in cases {
            let o = try observation(line(reason: value, interface: value))
            #expect(o.reason == reason, "\(value.debugDescription)")
            #expect(o.interface == interface, "\(value.debugDescription)")
        }
        // Near the line limit: kept to the field limits, cut at a character, marked.
        let long = String(repeating: "é", count: 15_000)
        let o = try observation(line(reason: long, interface: long))
        #expect(o.reason.utf8.count <= ExecLine.maxReasonLength && o.reason.hasSuffix("é…"))
        #expect(o.interface.utf8.count <= ExecLine.maxInterfaceLength && o.interface.hasSuffix("é…"))
    }

    @Test func invalidUTF8IsReplaced() throws {
        let bytes = Array(#"{"state":"portal","reason":"caf"#.utf8) + [0xC3, 0x28, 0xFF, 0xFE] + Array(#"","interface":"w"#.utf8)
            + [0x80] + Array(#""}"#.utf8)
        let o = try observation(bytes)
        #expect(o.reason == "caf\u{FFFD}(\u{FFFD}\u{FFFD}")
        #expect(o.interface == "w\u{FFFD}")
    }

    @Test func errorsQuoteTheLineVisiblyAndShort() {
        for line in ["\u{1b}]0;pwned\u{07}" + String(repeating: "x", count: 10_000),
                     #"{"state":"\u001b[2J"}"#, #"{"state":"online","kind":"\u001b[2J"}"#] {
            guard case .failure(let error) = ExecLine.parse(line, role: .reachability) else {
                Issue.record("accepted \(line.prefix(20))")
                continue
            }
            #expect(!error.description.unicodeScalars.contains(where: TerminalText.isControl), "\(error)")
            #expect(error.description.count < 200, "\(error)")
        }
    }

    @Test func dropReportLogsTheFirstFewThenCountsPerWindow() {
        var report = DropReport(limit: 3, window: .seconds(60))
        let t0 = ContinuousClock.now
        var logged = 0
        for i in 0..<1000 {
            #expect(report.takeQuiet(at: t0 + .milliseconds(i)) == nil)
            if report.shouldLog(at: t0 + .milliseconds(i)) { logged += 1 }
        }
        #expect(logged == 3)
        #expect(report.takeQuiet(at: t0 + .seconds(59)) == nil)
        #expect(report.takeQuiet(at: t0 + .seconds(60)) == 997)
        #expect(report.takeQuiet(at: t0 + .seconds(61)) == nil)
        let newWindow = report.shouldLog(at: t0 + .seconds(61))
        #expect(newWindow)
        #expect(report.takeQuiet(at: t0 + .seconds(62), final: true) == nil)
    }
}

/// Log lines as a sink of the daemon's logger would see them.
struct RecordingLog: LogHandler {
    let box: LogBox
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        box.lines.withLock { $0.append("\(event.level) \(event.message)") }
    }
}

final class LogBox: Sendable {
    let lines = Mutex<[String]>([])
    var logger: Logger { Logger(label: "t") { _ in RecordingLog(box: self) } }
}

@Suite struct ExecMonitorFloodTests {
    /// A program printing 1000 malformed lines in a row (garbage, escape
    /// sequences, invalid UTF-8, an overlong line) costs a handful of log lines
    /// and a count; the good line after them still gets through, cleaned.
    @Test func aThousandMalformedLinesAreCountedNotLoggedEach() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("exec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("flood.sh").path
        try #"""
            #!/bin/sh
            i=0
            while [ $i -lt 333 ]; do
              printf 'garbage %d\n' $i
              printf '\033]0;pwned\007{"state":\n'
              printf '{"state":"caf\303\050\377"}\n'
              i=$((i + 1))
            done
            head -c 70000 /dev/zero | tr '\0' 'x'; echo
            printf '{"state":"offline","reason":"after \\u001b[2J the flood\\n"}\n'
            """#.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)

        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let log = LogBox()
        let context = PluginContext(name: "monitor exec", logger: log.logger, paths: Paths.fromEnvironment(), control: bus)
        let monitor = try ExecMonitor(config: .init(command: [script]), context: context)
        await #expect(throws: ExecMonitor.Exited.self) {
            try await monitor.run(handle: bus.makeMonitorHandle(name: "exec"))
        }
        #expect(bus.current.state == .offline)
        #expect(bus.current.reason == "after  [2J the flood ")
        let lines = log.lines.withLock { $0 }
        let warnings = lines.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 6, "\(warnings)")
        #expect(warnings.last?.contains("995 more malformed lines dropped (up to line 1001)") == true, "\(warnings)")
        #expect(!lines.joined().unicodeScalars.contains(where: TerminalText.isControl), "\(lines)")
    }
}
