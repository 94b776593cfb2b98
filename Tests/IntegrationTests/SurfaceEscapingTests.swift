import Foundation
import LifelineTestKit
import Testing

/// What the real binaries print for hostile text in the state file and the
/// event log: the exact bytes on the terminal, and what waybar's markup parser
/// (Pango itself) makes of `lifeline watch --format waybar`.
@Suite(.serialized)
struct SurfaceEscapingTests {
    /// Each hostile reason as written into a file (raw bytes inside a JSON
    /// string: control characters as `\u` escapes, bad UTF-8 as is) and what a
    /// terminal must be sent for it.
    static let reasons: [(json: [UInt8], shown: String)] = [
        (Array("<b>x</b>".utf8), "<b>x</b>"),
        (Array("<span color=red>".utf8), "<span color=red>"),
        (Array(#"<a href=\"https://phish/\">x</a>"#.utf8), #"<a href="https://phish/">x</a>"#),
        (Array("a&b".utf8), "a&b"),
        (Array("#(touch /tmp/pwned) #{pane_id} #[fg=red]".utf8), "#(touch /tmp/pwned) #{pane_id} #[fg=red]"),
        (Array("%Y %s 100%".utf8), "%Y %s 100%"),
        (Array(#"\u001b]0;title\u0007"#.utf8), "^[]0;title^G"),
        (Array(#"\u001b[2J\n\u009b1m"#.utf8), "^[[2J^JM-^[1m"),
        (Array("caf".utf8) + [0xC3, 0x28, 0xFF], "caf\u{FFFD}(\u{FFFD}"),
        (Array(String(repeating: "long&<", count: 4000).utf8), String(repeating: "long&<", count: 4000)),
    ]

    static func stateFile(reason: [UInt8], interface: String = #"eth\u001b[1m0"#) -> [UInt8] {
        Array(#"{"state":"offline","previous":"online","since":1700000000000000,"interface":""#.utf8)
            + Array(interface.utf8) + Array(#"","kind":"wifi","reason":""#.utf8) + reason
            + Array(#"","rtt_ms":-1,"metered":false,"sequence":3,"pid":\#(getpid())}"#.utf8) + [0x0A]
    }

    /// `status` (plain and a template), from the front binary and the full CLI.
    @Test func statusPrintsControlCharactersVisibly() throws {
        let fixture = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: fixture.path("run/lifeline"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (json, shown) in Self.reasons {
            try Data(Self.stateFile(reason: json)).write(to: URL(fileURLWithPath: fixture.stateFilePath))
            let plain = try RawRun([Harness.binary, "status"], environment: fixture.environment)
            #expect(plain.status == 1, "\(plain.stderr)")
            let prefix = "offline via eth^[[1m0 (wifi) for "
            let text = String(decoding: plain.stdout, as: UTF8.self)
            let literal = text.hasPrefix(prefix) && text.hasSuffix(": " + shown + "\n")
            #expect(literal, "\(text.prefix(120).debugDescription)")
            #expect(!plain.stdout.contains(0x1B) && !plain.stdout.contains(0x07), "\(text.prefix(120).debugDescription)")
            for argv in [[Harness.binary, "status", "--format", "{interface}|{reason}"],
                         [Harness.binary + "-cli", "status", "--format", "{interface}|{reason}"]] {
                let run = try RawRun(argv, environment: fixture.environment)
                let literal = run.stdout == Array(("eth^[[1m0|" + shown + "\n").utf8)
                #expect(literal, "\(argv[0]): \(String(decoding: run.stdout.prefix(120), as: UTF8.self).debugDescription)")
            }
        }
    }

    /// A `since` no daemon writes (a crafted or corrupted state file) is an
    /// answer, never a crash: out of range, the file is not believed ("no
    /// daemon"); at the far edge of the range, `{duration}` still prints.
    @Test func statusSurvivesAnySince() throws {
        let fixture = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: fixture.path("run/lifeline"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (since, expected) in [("-9223372036854775808", nil), ("9223372036854775807", nil),
                                  ("253402300799000000", "0s")] {
            var file = Self.stateFile(reason: Array("r".utf8))
            let text = String(decoding: file, as: UTF8.self).replacingOccurrences(of: "1700000000000000", with: since)
            file = Array(text.utf8)
            try Data(file).write(to: URL(fileURLWithPath: fixture.stateFilePath))
            for binary in [Harness.binary, Harness.binary + "-cli"] {
                let run = try RawRun([binary, "status", "--format", "{state} {duration}"], environment: fixture.environment)
                let plain = try RawRun([binary, "status"], environment: fixture.environment)
                guard let duration = expected else {
                    #expect(run.status == 3 && plain.status == 3, "\(binary) since \(since): \(run.stderr)")
                    #expect(run.stdout.isEmpty && plain.stdout.isEmpty, "\(binary) since \(since)")
                    continue
                }
                #expect(run.status == 1, "\(binary): \(run.stderr)")
                #expect(String(decoding: run.stdout, as: UTF8.self) == "offline \(duration)\n", "\(binary)")
                #expect(plain.status == 1, "\(binary): \(plain.stderr)")
                #expect(String(decoding: plain.stdout, as: UTF8.self).contains(" for \(duration): r"), "\(binary)")
            }
        }
    }

    /// `watch` plain and with a template: the first line, as the state file says.
    @Test func watchPrintsControlCharactersVisibly() throws {
        let fixture = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: fixture.path("run/lifeline"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (json, shown) in Self.reasons {
            try Data(Self.stateFile(reason: json)).write(to: URL(fileURLWithPath: fixture.stateFilePath))
            let plain = try FirstLine(["watch"], fixture)
            let plainIsLiteral = plain == Array(("offline via eth^[[1m0 (wifi): " + shown + "\n").utf8)
            #expect(plainIsLiteral, "\(String(decoding: plain.prefix(120), as: UTF8.self).debugDescription)")
            let template = try FirstLine(["watch", "--format", "\u{1b}[1m{reason}\u{1b}[0m"], fixture)
            // The user's own escape sequences stay: only values are made visible.
            let templateIsLiteral = template == Array(("\u{1b}[1m" + shown + "\u{1b}[0m\n").utf8)
            #expect(templateIsLiteral, "\(String(decoding: template.prefix(120), as: UTF8.self).debugDescription)")
        }
    }

    /// `history`: the reason column of each outage. (The daemon writes its log
    /// in UTF-8; how a line that is not is read is the log reader's business.)
    @Test func historyPrintsControlCharactersVisibly() throws {
        let reasons = Self.reasons.filter { String(validating: $0.json, as: UTF8.self) != nil }
        let fixture = try DaemonFixture()
        let folder = fixture.path("state/lifeline")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var log: [UInt8] = []
        var since: Int64 = 1_700_000_000_000_000
        for (n, (json, _)) in reasons.enumerated() {
            for (state, reason) in [("offline", json), ("online", Array("back".utf8))] {
                let previous = state == "online" ? "offline" : "online"
                log += Array(#"{"state":"\#(state)","previous":"\#(previous)","since":\#(since),"interface":"eth\u001b[1m0","kind":"","reason":""#.utf8)
                log += reason + Array(#"","rtt_ms":-1,"metered":false,"sequence":\#(n * 2 + (state == "online" ? 2 : 1))}"#.utf8) + [0x0A]
                since += 60_000_000
            }
        }
        try Data(log).write(to: URL(fileURLWithPath: folder + "/events.jsonl"))
        let run = try RawRun([Harness.binary, "history"], environment: fixture.environment)
        #expect(run.status == 0, "\(run.stderr)")
        let text = String(decoding: run.stdout, as: UTF8.self)
        #expect(!run.stdout.contains(0x1B) && !run.stdout.contains(0x07), "\(text.prefix(300).debugDescription)")
        let rows = text.split(separator: "\n").dropFirst().map(String.init)
        #expect(rows.count == reasons.count, "\(text.prefix(300))")
        for (row, reason) in zip(rows, reasons) {
            let shown = row.hasSuffix("  offline  " + reason.shown)
            #expect(shown, "\(row.prefix(160).debugDescription)")
        }
    }

    /// `watch --format waybar`: valid JSON whose `text` and `tooltip` Pango parses
    /// to exactly the visible text (no tag, no entity taken from a value);
    /// `--format i3bar`: blocks with `markup: none`.
    @Test func waybarMarkupParsesToTheLiteralTextAndI3barIsPlain() throws {
        let pango = Pango.load()
        try Harness.require(missing: pango == nil ? "libpango-1.0.so.0 not found" : nil)
        guard let pango else { return }
        let fixture = try DaemonFixture()
        try FileManager.default.createDirectory(atPath: fixture.path("run/lifeline"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (json, shown) in Self.reasons {
            try Data(Self.stateFile(reason: json)).write(to: URL(fileURLWithPath: fixture.stateFilePath))
            let line = try FirstLine(["watch", "--format", "waybar"], fixture)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                                      "\(String(decoding: line.prefix(120), as: UTF8.self))")
            let tooltip = try #require(object["tooltip"] as? String)
            let parsed = pango.text(of: tooltip) == "offline via eth^[[1m0 (wifi): " + shown
            #expect(parsed, "\(tooltip.prefix(120).debugDescription)")
            #expect(pango.text(of: try #require(object["text"] as? String)) == "○ offline")

            let bar = try FirstLines(2 + 1, ["watch", "--format", "i3bar"], fixture)
            let status = bar.split(separator: 0x0A).map(Array.init)
            let blocks = try #require(try JSONSerialization.jsonObject(with: Data(status[2].dropLast())) as? [[String: Any]])
            #expect(blocks.first?["markup"] as? String == "none")
            #expect(blocks.first?["full_text"] as? String == "○ offline")
        }
    }
}

/// `pango_parse_markup` from the system's libpango, as GTK labels (waybar's
/// text and tooltip) use it: nil when the markup is refused.
struct Pango {
    typealias Parse = @convention(c) (
        UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer?,
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
    ) -> Int32
    let parse: Parse

    static func load() -> Pango? {
        guard let library = dlopen("libpango-1.0.so.0", RTLD_NOW), let symbol = dlsym(library, "pango_parse_markup")
        else { return nil }
        return Pango(parse: unsafeBitCast(symbol, to: Parse.self))
    }

    func text(of markup: String) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        let ok = markup.withCString { parse($0, -1, 0, nil, &text, nil, nil) }
        guard ok != 0, let text else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
}

/// A command run to completion; its standard output as raw bytes.
struct RawRun {
    let status: Int32
    let stdout: [UInt8]
    let stderr: String

    init(_ argv: [String], environment: [String: String]) throws {
        let r = try Spawned.run(argv, environment: environment)
        (status, stdout, stderr) = (r.status, r.stdout, String(decoding: r.stderr, as: UTF8.self))
    }
}

/// The first `count` lines a long-running `lifeline` command prints (its output
/// is captured in a file, read as it grows), then the command is stopped.
func FirstLines(_ count: Int, _ arguments: [String], _ fixture: DaemonFixture) throws -> [UInt8] {
    let p = try Spawned([Harness.binary] + arguments, environment: fixture.environment, stdout: .capture)
    defer { p.stop() }
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    var bytes: [UInt8] = []
    while clock.now < deadline {
        bytes = p.capturedStdout
        if bytes.count(where: { $0 == 0x0A }) >= count { break }
        usleep(2000)
    }
    return bytes
}

func FirstLine(_ arguments: [String], _ fixture: DaemonFixture) throws -> [UInt8] {
    try FirstLines(1, arguments, fixture)
}
