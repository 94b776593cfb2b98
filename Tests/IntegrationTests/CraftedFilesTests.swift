import Foundation
import Testing

/// The state file and the event log are anyone's to edit: numbers in them that
/// no daemon would write make `status` and `history` say so, never crash.
@Suite struct CraftedFilesTests {
    func stateRecord(since: String = "1700000000000000", rtt: String = "12", sequence: String = "3", mutedUntil: String = "0") -> String {
        #"{"state":"offline","previous":"online","since":\#(since),"interface":"eth0","kind":"ethernet","reason":"cable","rtt_ms":\#(rtt),"metered":false,"sequence":\#(sequence),"pid":\#(getpid()),"muted_until":\#(mutedUntil)}"#
    }

    func eventLine(since: String, state: String, sequence: Int) -> String {
        #"{"state":"\#(state)","previous":"online","since":\#(since),"interface":"eth0","kind":"ethernet","reason":"r","rtt_ms":-1,"metered":false,"sequence":\#(sequence)}"#
    }

    @Test func statusSaysNoDaemonForAStateFileWithNumbersOutOfRange() throws {
        let f = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: f.path("run/lifeline"), withIntermediateDirectories: true)
        // A sane record is believed (this test's pid is alive): the fixture is right.
        try stateRecord().write(toFile: f.stateFilePath, atomically: true, encoding: .utf8)
        #expect(try f.cli(["status"]).status == 1)

        let crafted = [
            stateRecord(since: "-9223372036854775808"), stateRecord(since: "9223372036854775807"),
            stateRecord(since: "-1"), stateRecord(rtt: "1e308"), stateRecord(rtt: "-1e308"),
            stateRecord(sequence: "9223372036854775807"), stateRecord(sequence: "-1"),
            stateRecord(mutedUntil: "-9223372036854775808"), stateRecord(mutedUntil: "9223372036854775807"),
        ]
        for text in crafted {
            try text.write(toFile: f.stateFilePath, atomically: true, encoding: .utf8)
            for arguments in [["status"], ["status", "--json"], ["status", "--format", "{duration} {rtt_ms}"]] {
                let r = try f.cli(arguments)
                #expect(r.status == 3, "\(arguments) with \(text): exit \(r.status) \(r.stderr)")
            }
        }
    }

    @Test func historySkipsEventsWithTimesOutOfRange() throws {
        let f = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: f.path("state/lifeline"), withIntermediateDirectories: true)
        let lines = [
            eventLine(since: "-9223372036854775808", state: "offline", sequence: 1),
            eventLine(since: "9223372036854775807", state: "online", sequence: 2),
            eventLine(since: "1700000000000000", state: "offline", sequence: 3),
            eventLine(since: "1700000060000000", state: "online", sequence: 4),
            eventLine(since: "9223372036854775807", state: "limited", sequence: 5),
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: f.eventLogPath, atomically: true, encoding: .utf8)
        for arguments in [["history"], ["history", "--since", "7d"], ["history", "--since", "36000d"]] {
            let r = try f.cli(arguments)
            #expect(r.status == 0, "\(arguments): exit \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("skipped 3 unreadable lines"), "\(r.stderr)")
        }
        let all = try f.cli(["history"])
        #expect(all.stdout.contains("1m"), "\(all.stdout)")
    }
}
