import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineProtocol

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List past outages (start, end, duration, worst state) from the event log.",
        discussion: """
            Reads the log that the configuration's `log` sink writes, its rotated files first. \
            --chart draws one row per day (local time) and one cell per hour, shaded by the \
            worst state in that hour, then a summary. --json prints the outages as a JSON array.
            """
    )

    @Option(help: "Only outages that ended within this span, e.g. 24h, 7d; for --chart, the span drawn (default: today and the 6 days before).")
    var since: String?

    @Flag(help: "Draw a day × hour timeline and a summary (outages, downtime, longest, availability).")
    var chart = false

    @Flag(help: "Print the outages as a JSON array.")
    var json = false

    @Option(help: "Colour the chart: auto (when standard output is a terminal and NO_COLOR is not set), always or never.")
    var color: ColourChoice = .auto

    @Option(name: .long, help: "Config file naming the log (default: the user's).")
    var config: String?

    /// The moment to draw up to, in seconds since the Unix epoch (default: now),
    /// so a chart can be reproduced exactly.
    @Option(help: .hidden)
    var now: Int64?

    enum ColourChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    func validate() throws {
        if chart, json { throw ValidationError("--chart and --json do not go together: pick one") }
        if let now, !(0...StateRecord.timeRange.upperBound / 1_000_000).contains(now) {
            throw ValidationError("--now: \(now) is not a time a log can hold")
        }
    }

    func run() throws {
        let paths = Paths.fromEnvironment()
        var window: Duration?
        if let since {
            do { window = try DurationText.parse(since) } catch {
                printError("--since: \(error)")
                throw ExitCode.validationFailure
            }
        }
        let logPath = try self.logPath(paths: paths)
        let contents = EventLog.read(path: logPath)
        if contents.badLines > 0 {
            let files = contents.badLinesByFile.map { "\($0.path) (\($0.count))" }.joined(separator: ", ")
            printError("skipped \(contents.badLines) unreadable lines: \(files)")
        }
        let now = self.now.map { $0 * 1_000_000 } ?? WallClock.micros()
        let outages = OutageHistory.outages(from: contents.events)
        if chart {
            print(drawChart(contents.events, outages: outages, window: window, now: now), terminator: "")
            return
        }
        var listed = outages
        if let window {
            let (cutoff, before1970) = now.subtractingReportingOverflow(window.microseconds)
            listed = listed.filter { ($0.end ?? now) >= (before1970 ? Int64.min : cutoff) }
        }
        if json {
            print(Self.json(listed, now: now))
            return
        }
        if listed.isEmpty {
            print("no outages in \(logPath)")
            return
        }
        print(pad("START", 19) + "  " + pad("END", 19) + "  " + pad("DURATION", 9) + "  WORST    REASON")
        for o in listed {
            let end = o.end.map(LocalDays.second) ?? "ongoing"
            print(pad(LocalDays.second(o.start), 19) + "  " + pad(end, 19) + "  "
                  + pad(DurationText.human(o.duration(now: now)), 9) + "  " + pad(o.worst.rawValue, 7) + "  " + TerminalText.visible(o.reason))
        }
    }

    /// The chart of `window` up to `now`; without a window, today and the 6 days before.
    private func drawChart(_ events: [StateEvent], outages: [OutageRecord], window: Duration?, now: Int64) -> String {
        var start = LocalDays.midnight(of: now, plusDays: -6)
        if let window {
            let (cutoff, before1970) = now.subtractingReportingOverflow(window.microseconds)
            start = before1970 ? 0 : max(0, cutoff)
        }
        let span = min(start, now)..<now
        if let firstRow = HistoryChart.firstRow(window: span) {
            printError("--chart draws at most \(HistoryChart.maxRows) days: from \(LocalDays.dayLabel(firstRow)) on (the summary covers all of --since)")
        }
        return HistoryChart(spans: OutageHistory.degradedSpans(from: events), outages: outages, window: span,
                            recordStart: events.map(\.since).min(), colour: useColour).render()
    }

    /// The file the configuration's (first) `log` sink writes. A configuration
    /// that does not load is an error, not a reason to read some other file and
    /// report "no outages".
    private func logPath(paths: Paths) throws -> String {
        let effective: DaemonConfig
        do {
            effective = try ConfigLoader.load(explicitPath: config, paths: paths)
        } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        if let log = effective.eventLogs(paths: paths).first { return log.path }
        printError("\(effective.source) has no log sink; reading \(paths.defaultLogFile), where one writes by default")
        return paths.defaultLogFile
    }

    private var useColour: Bool {
        switch color {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColour = Environment.value("NO_COLOR"), !noColour.isEmpty { return false }
            if Environment.value("TERM") == "dumb" { return false }
            return isatty(1) == 1
        }
    }

    /// `[{"start":…,"end":…,"duration_s":…,"worst":"offline","reason":"…"}, …]`,
    /// one outage a line; times in µs since the epoch as in the log, `end` null
    /// while the outage lasts.
    static func json(_ outages: [OutageRecord], now: Int64) -> String {
        let objects = outages.map { o in
            let fields: [(String, String)] = [
                ("start", String(o.start)),
                ("end", o.end.map { String($0) } ?? "null"),
                ("duration_s", JSONText.number(Double(o.duration(now: now).microseconds) / 1e6)),
                ("worst", JSONText.quote(o.worst.rawValue)),
                ("reason", JSONText.quote(o.reason)),
            ]
            return "{" + fields.map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        }
        return objects.isEmpty ? "[]" : "[\n" + objects.joined(separator: ",\n") + "\n]"
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}
