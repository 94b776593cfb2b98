import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineFormats
import LifelinePlatform
import LifelineReport

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List past outages (start, end, duration, worst state) from the event log.",
        discussion: """
            Reads the log that the configuration's `log` sink writes, its rotated files first. \
            --chart draws one row per day (local time) and one cell per hour, shaded by the \
            worst state in that hour, then a summary. --report writes an HTML page to hand \
            to your provider: a timeline per day, availability per day and week, the \
            outages and what failed (the last 30 days unless --since says otherwise). \
            --csv and --json print that page's table of outages. Time the computer was \
            asleep, or the daemon was not running, counts neither as up nor as down.
            """
    )

    @Option(help: "Only outages that ended within this span, e.g. 24h, 7d; for --chart, the span drawn (default: today and the 6 days before); for --report, the span (default: today and the 29 days before).")
    var since: String?

    @Flag(help: "Draw a day × hour timeline and a summary (outages, downtime, longest, availability).")
    var chart = false

    @Flag(help: "Print the outages as a JSON array (the columns of the report's table).")
    var json = false

    @Flag(help: "Print the outages as CSV (the columns of the report's table).")
    var csv = false

    @Option(help: ArgumentHelp("Write an HTML report (timeline, availability, outages, causes) to this file.", valueName: "file.html"))
    var report: String?

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
        let chosen = [chart ? "--chart" : nil, json ? "--json" : nil, csv ? "--csv" : nil, report != nil ? "--report" : nil].compactMap { $0 }
        if chosen.count > 1 { throw ValidationError("\(chosen.joined(separator: " and ")) do not go together: pick one") }
        if let report, report.isEmpty { throw ValidationError("--report needs a file name") }
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
        if let report {
            try writeReport(contents, to: report, now: now, window: window)
            return
        }
        if json || csv {
            // The whole log unless --since: the rows of the report's table.
            var from = Int64.min
            if let window {
                let (cutoff, before1970) = now.subtractingReportingOverflow(window.microseconds)
                from = before1970 ? Int64.min : cutoff
            }
            let rows = OutageRow.rows(Timeline(contents, now: now), window: from..<max(from, now))
            if json { print(OutageColumns.json(rows)) } else { print(OutageColumns.csv(rows), terminator: "") }
            return
        }
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

    /// The report as one HTML page at `path`, in the user's language.
    private func writeReport(_ contents: EventLog.Contents, to path: String, now: Int64, window: Duration?) throws {
        let page = ReportPage.user(Report(contents, now: now, since: window), writtenAt: WallClock.micros()).render()
        do {
            try Files.replaceAtomically(path, with: page, mode: 0o644)
        } catch {
            printError("--report: \(error)")
            throw ExitCode.failure
        }
        print("wrote \(path)")
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}
