import Foundation
import Testing

/// `lifeline history` run for real on event logs written the way the log sink
/// writes them: which file it reads, what it makes of rotated files and of
/// lines it cannot read, and the exact chart, summary and JSON it prints.
@Suite struct HistoryTests {
    /// Central European time with its summer-time rule, spelled out so the C
    /// library needs no zone files: the chart's week below spans the night the
    /// clocks go forward (Sun 2026-03-29, 02:00 → 03:00).
    static let zone = "CET-1CEST,M3.5.0,M10.5.0/3"
    /// Tue 2026-03-31 14:05:09 CEST.
    static let now = "1774958709"

    static func line(_ state: String, _ previous: String, _ since: Int64, reason: String = "r", sequence: Int) -> String {
        #"{"state":"\#(state)","previous":"\#(previous)","since":\#(since),"interface":"eth0","kind":"ethernet","reason":"\#(reason)","rtt_ms":-1,"metered":false,"sequence":\#(sequence)}"#
    }

    /// A week with four outages, local times (CET until the Sunday night, CEST after):
    /// the log begins Thu 09:30; offline Thu 12:10–12:40; limited from Sat 22:30,
    /// offline from Sun 00:50, portal from 01:30, online at 03:20 (3h 50m in all);
    /// portal Mon 08:00–08:05; limited since Tue 13:25, still going at `now`.
    static let week: [String] = [
        line("online", "unknown", 1_774_513_800_000_000, sequence: 1),
        line("offline", "online", 1_774_523_400_000_000, reason: "cable pulled", sequence: 2),
        line("online", "offline", 1_774_525_200_000_000, sequence: 3),
        line("limited", "online", 1_774_733_400_000_000, reason: "probe timed out", sequence: 4),
        line("offline", "limited", 1_774_741_800_000_000, sequence: 5),
        line("portal", "offline", 1_774_744_200_000_000, sequence: 6),
        line("online", "portal", 1_774_747_200_000_000, sequence: 7),
        line("portal", "online", 1_774_850_400_000_000, reason: "login page", sequence: 8),
        line("online", "portal", 1_774_850_700_000_000, sequence: 9),
        line("limited", "online", 1_774_956_300_000_000, reason: "DNS down", sequence: 10),
    ]

    static let weekChart = """
        History from Wed 2026-03-25 00:00 to Tue 2026-03-31 14:05, one cell per hour, local time (CEST, UTC+02:00)
                        00    06    12    18
        Wed 2026-03-25  ························
        Thu 2026-03-26  ·········░░░█░░░░░░░░░░░
        Fri 2026-03-27  ░░░░░░░░░░░░░░░░░░░░░░░░
        Sat 2026-03-28  ░░░░░░░░░░░░░░░░░░░░░░▓▓
        Sun 2026-03-29  ██ ▒░░░░░░░░░░░░░░░░░░░░
        Mon 2026-03-30  ░░░░░░░░▒░░░░░░░░░░░░░░░
        Tue 2026-03-31  ░░░░░░░░░░░░░▓▓
                        ░ online  ▒ portal  ▓ limited  █ offline  · not recorded

        4 outages, down 5h 5m in all, longest 3h 50m (from Sat 2026-03-28 22:30), availability 95.88%.

        """

    func fixture() throws -> DaemonFixture {
        let f = try DaemonFixture(extraEnvironment: ["TZ": Self.zone])
        try FileManager.default.createDirectory(atPath: f.path("state/lifeline"), withIntermediateDirectories: true)
        return f
    }

    func write(_ lines: [String], to path: String) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func chartOfAWeekWithoutColourWhenPiped() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let r = try f.cli(["history", "--chart", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "")
        #expect(r.stdout == Self.weekChart)
    }

    @Test func chartOfAWeekInColour() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let r = try f.cli(["history", "--chart", "--color", "always", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        let (g, m, y, red, grey, off) = ("\u{1B}[32m", "\u{1B}[35m", "\u{1B}[33m", "\u{1B}[31m", "\u{1B}[90m", "\u{1B}[0m")
        func on(_ colour: String, _ glyphs: String) -> String { colour + glyphs + off }
        let expected = """
            History from Wed 2026-03-25 00:00 to Tue 2026-03-31 14:05, one cell per hour, local time (CEST, UTC+02:00)
                            00    06    12    18
            Wed 2026-03-25  \(on(grey, "························"))
            Thu 2026-03-26  \(on(grey, "·········"))\(on(g, "░░░"))\(on(red, "█"))\(on(g, "░░░░░░░░░░░"))
            Fri 2026-03-27  \(on(g, "░░░░░░░░░░░░░░░░░░░░░░░░"))
            Sat 2026-03-28  \(on(g, "░░░░░░░░░░░░░░░░░░░░░░"))\(on(y, "▓▓"))
            Sun 2026-03-29  \(on(red, "██")) \(on(m, "▒"))\(on(g, "░░░░░░░░░░░░░░░░░░░░"))
            Mon 2026-03-30  \(on(g, "░░░░░░░░"))\(on(m, "▒"))\(on(g, "░░░░░░░░░░░░░░░"))
            Tue 2026-03-31  \(on(g, "░░░░░░░░░░░░░"))\(on(y, "▓▓"))
                            \(on(g, "░")) online  \(on(m, "▒")) portal  \(on(y, "▓")) limited  \(on(red, "█")) offline  \(on(grey, "·")) not recorded

            4 outages, down 5h 5m in all, longest 3h 50m (from Sat 2026-03-28 22:30), availability 95.88%.

            """
        #expect(r.stdout == expected)
    }

    /// Colour follows the terminal: on for a pseudo-terminal, off there too
    /// under NO_COLOR (and off for a pipe, as above).
    @Test(.requires(.tools(["script"]))) func chartColourFollowsTheTerminalAndNoColour() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let command = "'\(Harness.binary)' history --chart --now \(Self.now)"
        // A terminal that says it can show colour (a test runner's own TERM may be "dumb").
        var terminal = f.environment
        terminal["TERM"] = "xterm-256color"
        terminal["NO_COLOR"] = nil
        let onTerminal = try Harness.run(["script", "-qec", command, "/dev/null"], environment: terminal)
        #expect(onTerminal.stdout.contains("\u{1B}[31m█\u{1B}[0m"), "\(onTerminal.stdout)")
        var noColour = terminal
        noColour["NO_COLOR"] = "1"
        let plain = try Harness.run(["script", "-qec", command, "/dev/null"], environment: noColour)
        #expect(plain.stdout.contains("4 outages"), "\(plain.stdout)")
        #expect(!plain.stdout.contains("\u{1B}["), "\(plain.stdout)")
    }

    /// `--since` sets the span: the hours before it are blank, and the summary
    /// counts only what falls inside (here the ongoing outage's 40 minutes).
    @Test func chartSinceDrawsOnlyThatSpan() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let r = try f.cli(["history", "--chart", "--since", "2h", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            History from Tue 2026-03-31 12:05 to Tue 2026-03-31 14:05, one cell per hour, local time (CEST, UTC+02:00)
                            00    06    12    18
            Tue 2026-03-31              ░▓▓
                            ░ online  ▒ portal  ▓ limited  █ offline  · not recorded

            1 outage, down 40m 9s in all, longest 40m 9s (from Tue 2026-03-31 13:25), availability 66.54%.

            """)
    }

    /// A span of years draws its last 366 days, says so, and still sums it all.
    @Test func chartOfAVeryLongSpanDrawsItsLastYear() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let r = try f.cli(["history", "--chart", "--since", "36500d", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = r.stdout.split(separator: "\n").filter { $0.range(of: #"^[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}  "#, options: .regularExpression) != nil }
        #expect(rows.count == 366)
        #expect(rows.first?.hasPrefix("Mon 2025-03-31") == true, "\(rows.first ?? "")")
        #expect(rows.last?.hasPrefix("Tue 2026-03-31") == true)
        #expect(r.stderr == "lifeline: --chart draws at most 366 days: from Mon 2025-03-31 on (the summary covers all of --since)\n")
        #expect(r.stdout.contains("4 outages, down 5h 5m in all, longest 3h 50m (from Sat 2026-03-28 22:30), availability 95.88%."))
    }

    @Test func jsonListsTheOutages() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        let r = try f.cli(["history", "--json", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            [
            {"start":1774523400000000,"end":1774525200000000,"duration_s":1800,"worst":"offline","layer":"","cause":"unknown","ended_by":"online","reason":"cable pulled"},
            {"start":1774733400000000,"end":1774747200000000,"duration_s":13800,"worst":"offline","layer":"","cause":"unknown","ended_by":"online","reason":"probe timed out"},
            {"start":1774850400000000,"end":1774850700000000,"duration_s":300,"worst":"portal","layer":"","cause":"unknown","ended_by":"online","reason":"login page"},
            {"start":1774956300000000,"end":null,"duration_s":2409,"worst":"limited","layer":"","cause":"unknown","ended_by":"ongoing","reason":"DNS down"}
            ]

            """)
        let parsed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
        #expect(parsed?.count == 4)
        try FileManager.default.removeItem(atPath: f.eventLogPath)
        #expect(try f.cli(["history", "--json"]).stdout == "[]\n")
    }

    /// The log the configuration's `log` sink writes, wherever that is, with its
    /// rotated files oldest first: an outage that began in `.2` and ended in `.1`
    /// is one outage.
    @Test func readsTheConfiguredLogAndItsRotatedFiles() throws {
        let f = try fixture()
        let log = f.path("elsewhere/custom.jsonl")
        try FileManager.default.createDirectory(atPath: f.path("elsewhere"), withIntermediateDirectories: true)
        try f.writeConfig("""
            [[sink]]
            kind = "log"
            path = "\(log)"
            keep = 3
            """)
        try write(Array(Self.week[0...3]), to: log + ".2")
        try write(Array(Self.week[4...6]), to: log + ".1")
        try write(Array(Self.week[7...9]), to: log)
        // Something at the default path must not be what is read.
        try write([Self.line("offline", "online", 1_700_000_000_000_000, reason: "wrong file", sequence: 1)], to: f.eventLogPath)

        let r = try f.cli(["history", "--json", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        let starts = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])?.compactMap { $0["start"] as? Int64 }
        #expect(starts == [1_774_523_400_000_000, 1_774_733_400_000_000, 1_774_850_400_000_000, 1_774_956_300_000_000], "\(r.stdout)")
        #expect(!r.stdout.contains("wrong file"))

        let listed = try f.cli(["history", "--now", Self.now])
        #expect(listed.stdout.contains("2026-03-28 22:30:00  2026-03-29 03:20:00  3h 50m     offline  probe timed out"), "\(listed.stdout)")
        #expect(try f.cli(["history", "--chart", "--now", Self.now]).stdout == Self.weekChart)
    }

    /// A configuration that does not load is said, not read past: printing "no
    /// outages" from some other file would be a wrong answer.
    @Test func aBrokenConfigurationIsAnError() throws {
        let f = try fixture()
        try write(Self.week, to: f.eventLogPath)
        try f.writeConfig("[[sink]]\nkind = \"log\"\npath = 42\n")
        let r = try f.cli(["history"])
        #expect(r.status == 2)
        #expect(r.stderr.contains(f.configPath), "\(r.stderr)")
        #expect(r.stdout == "")
    }

    /// Lines that are not events (torn, binary, half an object, an unknown
    /// state) are skipped and counted, said once on stderr with the files they
    /// were in; the outages around them are all there.
    @Test func garbageLinesAreSkippedCountedAndSaidOnce() throws {
        let f = try fixture()
        var rotated = Data((Self.week[0...2].joined(separator: "\n") + "\n").utf8)
        rotated.append(Data([0xFF, 0xFE, 0x00, 0x1B, 0x5B, 0x32, 0x4A, 0x0A]))  // bytes, ESC[2J, not text
        try rotated.write(to: URL(fileURLWithPath: f.eventLogPath + ".1"))
        var current = Data()
        for text in [Self.week[3], #"{"state":"offline","previous":"lim"#, Self.week[4],
                     #"{"state":"sideways","previous":"online","since":1,"interface":"","kind":"","reason":"","rtt_ms":-1,"metered":false,"sequence":1}"#,
                     "not json at all"] + Self.week[5...9] {
            current.append(Data((text + "\n").utf8))
        }
        current.append(Data(#"{"state":"online","prev"#.utf8))  // torn: no newline
        try current.write(to: URL(fileURLWithPath: f.eventLogPath))

        let r = try f.cli(["history", "--chart", "--now", Self.now])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == Self.weekChart)
        #expect(r.stderr == "lifeline: skipped 5 unreadable lines: \(f.eventLogPath).1 (1), \(f.eventLogPath) (4)\n")
    }
}
