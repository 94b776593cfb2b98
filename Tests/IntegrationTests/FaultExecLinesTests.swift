import Foundation
import Testing

/// A monitor program that prints a thousand malformed lines, with valid ones
/// among them: the daemon stays up, every valid line takes effect in order, and
/// the malformed ones are reported clearly without flooding the log (the first
/// few one by one, the rest as a count).
@Suite(.serialized) struct FaultExecLinesTests {
    /// Malformed lines of every sort a broken or hostile program prints.
    static func malformed(_ n: Int) -> [UInt8] {
        let text: String
        switch n % 12 {
        case 0: text = "hello \(n)"
        case 1: text = "{\"state\":\"online\""
        case 2: text = "{\"interface\":\"eth0\"}"
        case 3: text = "{\"state\":42}"
        case 4: text = "{\"state\":\"sideways\"}"
        case 5: text = "{\"state\":\"online\",\"kind\":\"telepathy\"}"
        case 6: text = "{\"state\":\"online\",\"rtt_ms\":-1}"
        case 7: text = "{\"state\":\"unknown\"}"
        case 8: text = "[\"online\"]"
        case 9: text = "{\"state\":\"online\",\"metered\":\"yes\"}"
        case 10: text = "\u{1b}]0;pwned\u{07}{\"state\":"
        default:
            // Longer than a line may be, and invalid UTF-8 in its middle.
            if n % 24 == 11 { return Array("{\"state\":\"online\",\"reason\":\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: 70_000) + [0x0a] }
            return Array("{\"state\":\"".utf8) + [0xff, 0xfe, 0xc3] + Array("\"}\n".utf8)
        }
        return Array((text + "\n").utf8)
    }

    @Test(.requires(.tools(["tail"]))) func aThousandMalformedLinesAreRejectedWhileValidOnesTakeEffect() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try f.writeConfig(net.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"log\""))
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("state file") { FileManager.default.fileExists(atPath: f.stateFilePath) }

        // Ten valid observations, each after a hundred malformed lines, all in one go.
        let valid = ["online", "offline", "limited", "online", "portal", "online", "offline", "online", "limited", "online"]
        var feed: [UInt8] = []
        for (i, state) in valid.enumerated() {
            for n in 0..<100 { feed += Self.malformed(i * 100 + n) }
            feed += Array("{\"state\":\"\(state)\",\"interface\":\"eth0\",\"reason\":\"valid \(i)\"}\n".utf8)
        }
        try net.say(line: feed)
        await Harness.waitUntil(timeout: .seconds(20), "every valid line in effect") { f.loggedStates() == valid }
        let reasons = f.loggedEvents().compactMap { $0["reason"] as? String }
        #expect(reasons == (0..<10).map { "Valid \($0)." } || reasons == (0..<10).map { "valid \($0)" }, "\(reasons)")
        #expect(f.process?.isRunning == true)

        // Each malformed line is rejected with its reason; only the first few get a line of their own.
        let oneByOne = f.logLines(containing: "dropped: ")
        #expect(!oneByOne.isEmpty && oneByOne.count <= 5, "\(oneByOne.count) lines:\n\(oneByOne.prefix(10).joined(separator: "\n"))")
        #expect(oneByOne.first?.contains("line 1 dropped: not a JSON object: hello 0") == true, "\(oneByOne)")
        #expect(!f.daemonLog.contains("\u{1b}"), "an escape from the program reached the log")
        #expect(f.daemonLog.utf8.count < 64 * 1024, "the log grew to \(f.daemonLog.utf8.count) bytes")

        // The rest are counted: the count is written when the program ends (here, at stop).
        #expect(await f.stop() == 0)
        let counted = f.logLines(containing: "more malformed lines dropped")
        #expect(counted.count == 1, "\(counted)")
        let number = counted.first.flatMap { line in
            line.range(of: " more malformed").flatMap { Int(line[..<$0.lowerBound].split(separator: " ").last ?? "") }
        }
        #expect(number.map { $0 + oneByOne.count } == 1000, "\(counted) + \(oneByOne.count) one by one")
    }
}
