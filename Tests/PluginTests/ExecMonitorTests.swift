import Foundation
@testable import ExecMonitor
import LifelineCore
import LifelineTestKit
import Testing

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
    ])
    func malformedLinesAreRefusedWithAReason(line: String, reason: String) {
        switch ExecLine.parse(line, role: .reachability) {
        case .success(let o): Issue.record("accepted \(line) as \(o)")
        case .failure(let e): #expect(e.description.contains(reason), "\(e)")
        }
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
