import Foundation
import LifelineCore
import LifelineTestKit
import Testing

/// `lifeline history --report`, `--csv` and `--json`, run for real on a month
/// of log written the way the daemon writes it (transitions, sleep, wake and
/// stop lines). The expected numbers come from the generator's own record of
/// what it made happen, not from the log: the page, the CSV and the JSON must
/// each agree with it.
@Suite struct ReportTests {
    /// Days in UTC: the generator's own arithmetic of days needs no zone files.
    static let zone = "UTC"
    /// Tue 2026-03-31 12:00:00 UTC.
    static let now: Int64 = 1_774_958_400_000_000
    static let day: Int64 = 86_400_000_000
    static let hour: Int64 = 3_600_000_000
    static let minute: Int64 = 60_000_000
    /// `--since 30d`.
    static let from = now - 30 * day

    func fixture(_ extra: [String: String] = [:]) throws -> DaemonFixture {
        let f = try DaemonFixture(extraEnvironment: ["TZ": Self.zone].merging(extra) { $1 })
        try FileManager.default.createDirectory(atPath: f.path("state/lifeline"), withIntermediateDirectories: true)
        return f
    }

    // MARK: The month

    /// A month made up by a seeded generator: every layer fails at least once,
    /// the machine sleeps (once in the middle of an outage, once with its sleep
    /// line lost), the daemon stops cleanly (once in an outage), and is killed
    /// once (a start with no stop line before it). The log begins before the
    /// span, in the middle of an outage, and ends in one still going.
    struct Month {
        enum Kind: Equatable { case up, down, asleep, stopped }
        struct Interval { var start: Int64; var end: Int64; var kind: Kind }
        struct Row: Equatable { var start: Int64; var end: Int64?; var worst: String; var layer: String; var cause: String; var endedBy: String }

        var lines: [String] = []
        var intervals: [Interval] = []
        var rows: [Row] = []
        private var sequence = 0
        private var seed: UInt64 = 0x5EED
        private var t: Int64

        static let layers = ["link", "carrier", "address", "route", "gateway", "dns", "tcp", "tls", "http", "portal"]
        static let cause = ["link": "device", "carrier": "device", "address": "device", "route": "device", "gateway": "router",
                            "dns": "dns", "tcp": "beyond", "tls": "beyond", "http": "beyond", "portal": "portal"]
        static func state(_ layer: String) -> String {
            layer == "portal" ? "portal" : ["link", "carrier", "address", "route"].contains(layer) ? "offline" : "limited"
        }

        init() {
            t = ReportTests.from - 2 * ReportTests.day
            transition("online", "unknown")
            up(until: ReportTests.from - ReportTests.hour)
            // Began before the span: counted from the span's start.
            outage("gateway", length: 3 * ReportTests.hour)
            var episode = 0
            while t < ReportTests.now - 8 * ReportTests.hour {
                up(until: t + ReportTests.hour + random(9 * ReportTests.hour))
                let layer = Self.layers[episode % Self.layers.count]
                switch episode % 7 {
                case 2: sleep(random(6 * ReportTests.hour) + ReportTests.hour)
                case 4: stopAndStart(random(3 * ReportTests.hour) + ReportTests.minute)
                default: outage(layer, length: random(50 * ReportTests.minute) + 5_000_000)
                }
                // The extras begin after some time up: an `online` that lasted no
                // time would join two outages into one.
                if [12, 19, 23, 26, 30].contains(episode) { up(until: t + 10 * ReportTests.minute) }
                if episode == 12 { outageAcrossSleep() }
                if episode == 19 { outageAcrossRestart() }
                if episode == 23 { killedAndStarted() }
                if episode == 26 { sleepWithoutItsFirstLine() }
                if episode == 30 { escalation() }
                episode += 1
            }
            up(until: ReportTests.now - ReportTests.hour)
            // Still going at `now`.
            let start = t
            transition("limited", "online", diagnosis: "dns", reason: "DNS down")
            intervals.append(Interval(start: start, end: ReportTests.now, kind: .down))
            rows.append(Row(start: start, end: nil, worst: "limited", layer: "dns", cause: "dns", endedBy: "ongoing"))
            t = ReportTests.now
        }

        /// Whole seconds below `below` (µs).
        mutating func random(_ below: Int64) -> Int64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int64((seed >> 33) % UInt64(below / 1_000_000)) * 1_000_000
        }

        mutating func transition(_ state: String, _ previous: String, diagnosis: String = "", reason: String = "r") {
            sequence += 1
            lines.append(#"{"state":"\#(state)","previous":"\#(previous)","since":\#(t),"interface":"wlan0","kind":"wifi","reason":"\#(reason)","rtt_ms":-1,"metered":false,"sequence":\#(sequence),"connection":"","diagnosis":"\#(diagnosis)","families":{}}"#)
        }

        mutating func up(until end: Int64) {
            intervals.append(Interval(start: t, end: end, kind: .up))
            t = end
        }

        /// Down on `layer` for `length`, then online.
        mutating func outage(_ layer: String, length: Int64) {
            let state = Self.state(layer)
            transition(state, "online", diagnosis: layer, reason: "\(layer) failed")
            intervals.append(Interval(start: t, end: t + length, kind: .down))
            rows.append(Row(start: t, end: t + length, worst: state, layer: layer, cause: Self.cause[layer]!, endedBy: "online"))
            t += length
            transition("online", state)
        }

        mutating func sleep(_ length: Int64) {
            lines.append(#"{"mark":"sleep","since":\#(t)}"#)
            lines.append(#"{"mark":"wake","since":\#(t + length),"asleep_since":\#(t)}"#)
            intervals.append(Interval(start: t, end: t + length, kind: .asleep))
            t += length
        }

        mutating func stopAndStart(_ length: Int64) {
            lines.append(#"{"mark":"stop","since":\#(t)}"#)
            intervals.append(Interval(start: t, end: t + length, kind: .stopped))
            t += length
            transition("online", "unknown")
        }

        /// Offline, asleep for 2 h still offline, online 40 s after waking:
        /// two rows, the first ended by the sleep.
        mutating func outageAcrossSleep() {
            let a = t
            transition("offline", "online", diagnosis: "carrier", reason: "carrier lost")
            t += 7 * ReportTests.minute
            rows.append(Row(start: a, end: t, worst: "offline", layer: "carrier", cause: "device", endedBy: "asleep"))
            intervals.append(Interval(start: a, end: t, kind: .down))
            sleep(2 * ReportTests.hour)
            intervals.append(Interval(start: t, end: t + 40_000_000, kind: .down))
            rows.append(Row(start: t, end: t + 40_000_000, worst: "offline", layer: "carrier", cause: "device", endedBy: "online"))
            t += 40_000_000
            transition("online", "offline")
        }

        /// Limited, the daemon stopped for 30 min, starts again limited, online after 10 min.
        mutating func outageAcrossRestart() {
            let a = t
            transition("limited", "online", diagnosis: "tcp", reason: "refused")
            t += 20 * ReportTests.minute
            intervals.append(Interval(start: a, end: t, kind: .down))
            rows.append(Row(start: a, end: t, worst: "limited", layer: "tcp", cause: "beyond", endedBy: "stopped"))
            lines.append(#"{"mark":"stop","since":\#(t)}"#)
            intervals.append(Interval(start: t, end: t + 30 * ReportTests.minute, kind: .stopped))
            t += 30 * ReportTests.minute
            transition("limited", "unknown", diagnosis: "tcp", reason: "refused")
            intervals.append(Interval(start: t, end: t + 10 * ReportTests.minute, kind: .down))
            rows.append(Row(start: t, end: t + 10 * ReportTests.minute, worst: "limited", layer: "tcp", cause: "beyond", endedBy: "online"))
            t += 10 * ReportTests.minute
            transition("online", "limited")
        }

        /// Killed with no stop line: the next start says `unknown`, and the time
        /// between counts as the state last logged (up).
        mutating func killedAndStarted() {
            up(until: t + 2 * ReportTests.hour)
            transition("online", "unknown")
        }

        mutating func sleepWithoutItsFirstLine() {
            lines.append(#"{"mark":"wake","since":\#(t + 3 * ReportTests.hour),"asleep_since":\#(t)}"#)
            intervals.append(Interval(start: t, end: t + 3 * ReportTests.hour, kind: .asleep))
            t += 3 * ReportTests.hour
        }

        /// DNS fails first, then the link: one outage, worst offline, layer dns.
        mutating func escalation() {
            let a = t
            transition("limited", "online", diagnosis: "dns", reason: "DNS down")
            t += 5 * ReportTests.minute
            transition("offline", "limited", diagnosis: "link", reason: "wlan0 down")
            t += 9 * ReportTests.minute
            intervals.append(Interval(start: a, end: t, kind: .down))
            rows.append(Row(start: a, end: t, worst: "offline", layer: "dns", cause: "dns", endedBy: "online"))
            transition("online", "offline")
        }

        /// Time of `kind` inside `span`.
        func time(_ kind: Kind, in span: Range<Int64>) -> Int64 {
            intervals.filter { $0.kind == kind }.reduce(0) { $0 + max(0, min($1.end, span.upperBound) - max($1.start, span.lowerBound)) }
        }

        /// The rows inside the span, cut to it.
        var rowsInSpan: [Row] {
            rows.compactMap { r in
                guard (r.end ?? ReportTests.now) > ReportTests.from else { return nil }
                var cut = r
                cut.start = max(r.start, ReportTests.from)
                return cut
            }
        }
    }

    /// "99.52%": hundredths rounded down, below 100% whenever anything was down.
    static func availability(up: Int64, down: Int64) -> String {
        guard up + down > 0 else { return "—" }
        var h = (up / 1000) * 10_000 / ((up + down) / 1000)
        if down > 0 { h = min(h, 9_999) }
        return String(format: "%d.%02d%%", h / 100, h % 100)
    }

    static func human(_ micros: Int64) -> String { DurationText.human(.microseconds(micros)) }

    @Test func aMonthAgreesInThePageTheCSVAndTheJSON() throws {
        let month = Month()
        let f = try fixture()
        try (month.lines.joined(separator: "\n") + "\n").write(toFile: f.eventLogPath, atomically: true, encoding: .utf8)
        // Every layer failed at least once, sleeps and stops are there.
        #expect(Set(month.rows.map(\.layer)) == Set(Month.layers))
        #expect(month.intervals.contains { $0.kind == .asleep } && month.intervals.contains { $0.kind == .stopped })
        let expected = month.rowsInSpan
        let nowArg = String(Self.now / 1_000_000)

        // JSON: every row, every column.
        let json = try f.cli(["history", "--json", "--since", "30d", "--now", nowArg])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr == "")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let fromJSON = objects.map { o in
            Month.Row(start: o["start"] as? Int64 ?? -1, end: o["end"] as? Int64, worst: o["worst"] as? String ?? "",
                      layer: o["layer"] as? String ?? "", cause: o["cause"] as? String ?? "", endedBy: o["ended_by"] as? String ?? "")
        }
        #expect(fromJSON == expected)
        let durations = objects.map { Int64((($0["duration_s"] as? Double) ?? -1) * 1_000_000) }
        #expect(durations == expected.map { ($0.end ?? Self.now) - $0.start })

        // CSV: the same rows, in the same columns.
        let csv = try f.cli(["history", "--csv", "--since", "30d", "--now", nowArg])
        #expect(csv.status == 0, "\(csv.stderr)")
        let csvLines = csv.stdout.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(csvLines.first == ["start", "end", "duration_s", "worst", "layer", "cause", "ended_by", "reason"])
        let csvRows = Array(csvLines.dropFirst())
        #expect(csvRows.count == expected.count)
        #expect(csvRows.map { $0[2] } == durations.map { JSONTextLike.number(Double($0) / 1e6) })
        #expect(csvRows.map { $0[5] } == expected.map(\.cause))
        #expect(csvRows.map { $0[6] } == expected.map(\.endedBy))
        #expect(csvRows.first?[0] == "2026-03-01T12:00:00+00:00", "the outage that began before the span starts with it")

        // The page: the figures, the causes and every day's availability.
        let report = f.path("report.html")
        let r = try f.cli(["history", "--report", report, "--since", "30d", "--now", nowArg])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: report, encoding: .utf8)
        let span = Self.from..<Self.now
        let (up, down) = (month.time(.up, in: span), month.time(.down, in: span))
        #expect(down == durations.reduce(0, +), "the generator's downtime is the sum of its rows")
        let figures = Self.figures(page)
        #expect(figures["Availability"] == Self.availability(up: up, down: down))
        #expect(figures["Downtime"] == Self.human(down))
        #expect(figures["Outages"] == String(expected.count))
        #expect(figures["Asleep"] == Self.human(month.time(.asleep, in: span)))
        #expect(figures["Lifeline not running"] == Self.human(month.time(.stopped, in: span)))
        #expect(figures["Longest outage"] == Self.human(durations.max() ?? 0))

        var causes: [String: (count: Int, downtime: Int64)] = [:]
        for (row, length) in zip(expected, durations) {
            causes[row.cause, default: (0, 0)].count += 1
            causes[row.cause, default: (0, 0)].downtime += length
        }
        let summaryCauses = Self.causes(Self.summary(page))
        #expect(summaryCauses.map(\.cause) == ["device", "router", "dns", "beyond", "portal"])
        for c in summaryCauses {
            #expect(c.count == causes[c.cause]?.count, "\(c.cause)")
            #expect(c.downtime == causes[c.cause].map { Self.human($0.downtime) }, "\(c.cause)")
        }

        // Days: from the span's first (partial) day to today, each one's share.
        let days = Self.days(page)
        let firstMidnight = Self.from - Self.from % Self.day
        #expect(days.count == Int((Self.now - firstMidnight) / Self.day) + 1)
        for (i, shown) in days.enumerated() {
            let midnight = firstMidnight + Int64(i) * Self.day
            let daySpan = max(midnight, Self.from)..<min(midnight + Self.day, Self.now)
            let want = Self.availability(up: month.time(.up, in: daySpan), down: month.time(.down, in: daySpan))
            #expect(shown.availability == want, "\(shown.date)")
        }
        #expect(days.first?.date == "Sunday 2026-03-01")
        #expect(days.last?.date == "Tuesday 2026-03-31")
        // The week pages: one per week that has a day in the span.
        #expect(page.components(separatedBy: "<section class=\"sheet week\">").count - 1 == 6)
    }

    /// A reason is the network's and a monitor's words: on the page it is text,
    /// never markup, and the page holds no script at all.
    @Test func aHostileReasonIsTextOnThePage() throws {
        let f = try fixture()
        let hostile = #"<script>alert(\"owned\")</script><img src=x onerror=alert(1)><b>bold</b> & 'quotes'"#
        let lines = [
            #"{"state":"online","previous":"unknown","since":\#(Self.now - 3 * Self.hour),"interface":"wlan0","kind":"wifi","reason":"r","rtt_ms":-1,"metered":false,"sequence":1}"#,
            #"{"state":"portal","previous":"online","since":\#(Self.now - 2 * Self.hour),"interface":"wlan0","kind":"wifi","reason":"\#(hostile)","rtt_ms":-1,"metered":false,"sequence":2,"diagnosis":"portal"}"#,
            #"{"state":"online","previous":"portal","since":\#(Self.now - Self.hour),"interface":"wlan0","kind":"wifi","reason":"r","rtt_ms":-1,"metered":false,"sequence":3}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: f.eventLogPath, atomically: true, encoding: .utf8)
        let report = f.path("hostile.html")
        let r = try f.cli(["history", "--report", report, "--now", String(Self.now / 1_000_000)])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: report, encoding: .utf8)
        #expect(!page.lowercased().contains("<script"))
        #expect(!page.contains("<img"))
        #expect(!page.contains("<b>"))
        #expect(page.contains("&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;bold&lt;/b&gt; &amp; &#39;quotes&#39;"))

        // What a browser makes of it: the reason is in its cell as text, and no element came of it.
        try Harness.require(.tools(["chromium"]))
        let dom = try Self.chromium(["--dump-dom", "file://" + report], home: f.path("chromium"))
        #expect(dom.contains("<td class=\"reason\">&lt;script&gt;alert(\"owned\")&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;bold&lt;/b&gt; &amp; 'quotes'</td>"), "\(dom.prefix(3000))")
        #expect(!dom.contains("<script") && !dom.contains("<img"))
    }

    /// Chromium draws the page (English, then Persian right to left) into
    /// artifacts/: not blank, the timelines drawn (their green is the SVG's
    /// alone), and in Persian the page runs right to left in Persian words.
    @Test(.requires(.tools(["chromium", "convert", "msgfmt"])), arguments: ["en", "fa"]) func chromiumDrawsThePage(language: String) throws {
        let month = Month()
        let catalogs = try Catalogs(in: FileManager.default.temporaryDirectory.appendingPathComponent("report-po-\(getpid())-\(language)").path)
        defer { try? FileManager.default.removeItem(atPath: (catalogs.directory as NSString).deletingLastPathComponent) }
        let f = try fixture(language == "en" ? [:] : catalogs.environment(language))
        try (month.lines.joined(separator: "\n") + "\n").write(toFile: f.eventLogPath, atomically: true, encoding: .utf8)
        let report = f.path("report-\(language).html")
        let r = try f.cli(["history", "--report", report, "--since", "14d", "--now", String(Self.now / 1_000_000)])
        #expect(r.status == 0, "\(r.stderr)")

        let dom = try Self.chromium(["--dump-dom", "file://" + report], home: f.path("chromium"))
        #expect(dom.contains("<html lang=\"\(language)\" dir=\"\(language == "fa" ? "rtl" : "ltr")\">"), "\(dom.prefix(300))")
        // Parsed as SVG: each day's timeline with its rectangles.
        #expect(dom.components(separatedBy: "<svg viewBox=\"0 0 1000 20\"").count - 1 == 15)
        #expect(dom.contains("<rect class=\"offline\""))
        if language == "fa" { #expect(dom.contains("گزارش اتصال"), "the title in Persian") }

        let png = Self.artifacts + "/report-\(language).png"
        _ = try Self.chromium(["--screenshot=\(png)", "--window-size=1000,1800", "file://" + report], home: f.path("chromium"))
        #expect(FileManager.default.fileExists(atPath: png))
        let colours = try Harness.run(["convert", png, "-format", "%k", "info:"])
        #expect((Int(colours.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 100, "a blank page: \(colours.stdout)")
        // The timelines' green (#5bb974) is drawn by the SVG and nothing else.
        let green = try Harness.run(["convert", png, "-fuzz", "2%", "-fill", "black", "+opaque", "#5bb974", "-fill", "white", "-opaque", "#5bb974",
                                     "-format", "%[fx:mean*w*h]", "info:"])
        #expect((Double(green.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 10_000, "no timeline drawn: \(green.stdout) \(green.stderr)")

        // Printed: the summary on one A4 sheet, then one per week (Mon 03-16, 03-23, 03-30).
        let pdf = f.path("report-\(language).pdf")
        _ = try Self.chromium(["--no-pdf-header-footer", "--print-to-pdf=\(pdf)", "file://" + report], home: f.path("chromium"))
        let printed = try String(decoding: Data(contentsOf: URL(fileURLWithPath: pdf)), as: UTF8.self)
        #expect(Self.matches(#"/Type\s*/Page[^s]"#, in: printed).count == 1 + 3)
        // A4 in points: 595 × 842.
        #expect(Self.matches(#"/MediaBox\s*\[0 0 59[45][.\d]* 841[.\d]*\]"#, in: printed).count == 1 + 3)
    }

    // MARK: Reading the page

    static var artifacts: String {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = repo.appendingPathComponent("artifacts").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Headless Chromium with a profile of its own; as root it needs --no-sandbox.
    static func chromium(_ arguments: [String], home: String) throws -> String {
        let r = try Harness.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                 "--no-first-run", "--user-data-dir=\(home)"] + arguments)
        #expect(r.status == 0, "chromium: \(r.stderr.suffix(2000))")
        return r.stdout
    }

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { m in
            (1..<m.numberOfRanges).map { Range(m.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    static func figures(_ page: String) -> [String: String] {
        var out: [String: String] = [:]
        for m in matches(#"<span class="value">([^<]*)</span><span class="label">([^<]*)</span>"#, in: page) { out[m[1]] = m[0] }
        return out
    }

    static func summary(_ page: String) -> String {
        guard let start = page.range(of: "<section class=\"sheet summary\">"), let end = page.range(of: "</section>", range: start.upperBound..<page.endIndex)
        else { return "" }
        return String(page[start.upperBound..<end.lowerBound])
    }

    static func causes(_ html: String) -> [(cause: String, count: Int, downtime: String)] {
        matches(#"<tr class="cause-(\w+)"><td><span class="swatch"></span>[^<]*</td><td class="num">(\d+)</td><td class="num">([^<]*)</td>"#, in: html)
            .map { ($0[0], Int($0[1]) ?? -1, $0[2]) }
    }

    static func days(_ page: String) -> [(date: String, availability: String)] {
        matches(#"<span class="date">([^<]*)</span>.*?<span class="avail">([^<]*)<small>"#, in: page).map { ($0[0], $0[1]) }
    }
}

/// JSON's way with numbers, as the CLI writes them (whole seconds without a point).
enum JSONTextLike {
    static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }
}
