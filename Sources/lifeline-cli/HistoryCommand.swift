import ArgumentParser
import Glibc
import LifelineCore
import LifelineProtocol
import LifelineDaemon

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List past outages (start, end, duration, worst state) from the event log."
    )

    @Option(help: "Only outages that ended within this span, e.g. 24h, 7d.")
    var since: String?

    @Option(name: .long, help: "Config file naming the log (default: the user's).")
    var config: String?

    func run() throws {
        let paths = Paths.fromEnvironment()
        var window: Duration?
        if let since {
            do { window = try DurationText.parse(since) } catch {
                printError("--since: \(error)")
                throw ExitCode.validationFailure
            }
        }
        let effective = try? ConfigLoader.load(explicitPath: config, paths: paths)
        let logPath = effective?.eventLogs(paths: paths).first?.path ?? paths.defaultLogFile
        let contents = EventLog.read(path: logPath)
        if contents.badLines > 0 { printError("\(logPath): skipped \(contents.badLines) unreadable lines") }
        let now = WallClock.micros()
        var outages = OutageHistory.outages(from: contents.events)
        if let window {
            let (cutoff, before1970) = now.subtractingReportingOverflow(window.microseconds)
            outages = outages.filter { ($0.end ?? now) >= (before1970 ? Int64.min : cutoff) }
        }
        if outages.isEmpty {
            print("no outages in \(logPath)")
            return
        }
        print(pad("START", 19) + "  " + pad("END", 19) + "  " + pad("DURATION", 9) + "  WORST    REASON")
        for o in outages {
            let end = o.end.map(localTime) ?? "ongoing"
            print(pad(localTime(o.start), 19) + "  " + pad(end, 19) + "  "
                  + pad(DurationText.human(o.duration(now: now)), 9) + "  " + pad(o.worst.rawValue, 7) + "  " + TerminalText.visible(o.reason))
        }
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    private func localTime(_ micros: Int64) -> String {
        var t = time_t(micros / 1_000_000)
        var parts = tm()
        localtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
