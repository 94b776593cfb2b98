import LifelineCore
import LifelinePlatform

/// `history --report`: the report as one self-contained HTML page, inline CSS
/// and SVG, no script, nothing fetched, so it opens anywhere and can be mailed
/// as it is. A first page sums the whole span (availability, causes, weeks);
/// then one page per week: a timeline per day, coloured by state, with the
/// day's availability beside it, and the week's outages. Printed, each of
/// these is one A4 sheet.
///
/// Everything that comes from the log (a reason is a monitor's sentence, and
/// can hold anything the network sent) is escaped as text.
public struct ReportPage {
    public var report: Report
    public var translator: Translator
    /// The page's language and direction (`lang`, `dir`).
    public var language: PageLanguage
    /// When the page was written, for its heading.
    public var writtenAt: Int64

    /// At most this many outages are listed on a week's page, the longest ones,
    /// so that the week prints on one sheet; the CSV and JSON list every one.
    public static let rowsPerWeek = 22

    public init(report: Report, translator: Translator, language: PageLanguage, writtenAt: Int64) {
        self.report = report
        self.translator = translator
        self.language = language
        self.writtenAt = writtenAt
    }

    private func tr(_ msgid: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
        translator.tr(msgid, values)
    }

    public func render() -> String {
        var out = ""
        out.reserveCapacity(64 * 1024 + report.rows.count * 40)
        let title = tr("Connection report")
        out += "<!DOCTYPE html>\n<html lang=\"\(language.tag)\" dir=\"\(language.direction)\">\n<head>\n<meta charset=\"utf-8\">\n"
        out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        out += "<title>" + HTML.text(title) + "</title>\n<style>\n" + Self.style + "</style>\n</head>\n<body>\n"
        out += Self.patterns
        summary(into: &out, title: title)
        for week in report.weeks { weekPage(week, into: &out) }
        out += "</body>\n</html>\n"
        return out
    }

    // MARK: The first page

    private func summary(into out: inout String, title: String) {
        let total = report.tally
        let zone = LocalDays.zone(at: report.window.upperBound)
        out += "<section class=\"sheet summary\">\n<header>\n<h1>" + HTML.text(title) + "</h1>\n"
        out += "<p class=\"period\">" + HTML.text(tr("From {start} to {end}, local time ({zone}).", [
            "start": dateTime(report.window.lowerBound), "end": dateTime(report.window.upperBound), "zone": zone,
        ])) + "</p>\n"
        out += "<p class=\"written\">" + HTML.text(tr("Written by Lifeline on {time} from its event log.", ["time": dateTime(writtenAt)]))
            + "</p>\n</header>\n"

        let longest = report.rows.max { $0.duration < $1.duration }
        out += "<div class=\"figures\">\n"
        figure(tr("Availability"), total.availabilityText, into: &out, tone: "main")
        figure(tr("Downtime"), duration(total.down), into: &out)
        figure(tr("Outages"), String(report.rows.count), into: &out)
        figure(tr("Longest outage"), longest.map { duration($0.duration) } ?? "—", into: &out)
        figure(tr("Asleep"), duration(total.asleep), into: &out, tone: "quiet")
        figure(tr("Lifeline not running"), duration(total.notRunning), into: &out, tone: "quiet")
        out += "</div>\n"
        out += "<p class=\"note\">" + HTML.text(tr("Availability is the share of the time the connection was watched that it was up. Time the computer was asleep, or Lifeline was not running, counts neither for nor against it.")) + "</p>\n"

        out += "<h2>" + HTML.text(tr("Causes")) + "</h2>\n"
        causes(Report.causes(report.rows), into: &out, bars: true)

        if !report.qualityHours.isEmpty { qualityHours(into: &out) }

        out += "<h2>" + HTML.text(tr("Weeks")) + "</h2>\n<table class=\"weeks\">\n<thead><tr>"
        for heading in [tr("Week"), tr("Availability"), tr("Downtime"), tr("Outages"), tr("Asleep"), tr("Not running")] {
            out += "<th>" + HTML.text(heading) + "</th>"
        }
        out += "</tr></thead>\n<tbody>\n"
        for week in report.weeks {
            out += "<tr><td>" + HTML.text(weekName(week)) + "</td><td class=\"num\">" + week.tally.availabilityText
                + "</td><td class=\"num\">" + HTML.text(duration(week.tally.down)) + "</td><td class=\"num\">\(week.rows.count)</td><td class=\"num\">"
                + HTML.text(duration(week.tally.asleep)) + "</td><td class=\"num\">" + HTML.text(duration(week.tally.notRunning)) + "</td></tr>\n"
        }
        out += "</tbody>\n</table>\n"
        legend(into: &out)
        out += "</section>\n"
    }

    /// Round trips and retransmissions by local hour of the day, from the
    /// quality the daemon read from the user's own traffic.
    private func qualityHours(into out: inout String) {
        out += "<h2>" + HTML.text(tr("Quality by hour of day")) + "</h2>\n<table class=\"weeks quality\">\n<thead><tr>"
        for heading in [tr("Hour"), tr("Readings"), tr("Round trip"), tr("Retransmitted"), tr("Degraded or poor")] {
            out += "<th>" + HTML.text(heading) + "</th>"
        }
        out += "</tr></thead>\n<tbody>\n"
        for h in report.qualityHours {
            let hour = (h.hour < 10 ? "0" : "") + "\(h.hour):00"
            let rtt = h.rttMs.map { "\(Int($0.rounded())) ms" } ?? "—"
            let share = h.retransmitShare.map { Self.number($0 * 100) + " %" } ?? "—"
            var row = "<tr><td>" + hour + "</td><td class=\"num\">" + String(h.readings) + "</td>"
            row += "<td class=\"num\">" + HTML.text(rtt) + "</td><td class=\"num\">" + HTML.text(share) + "</td>"
            out += row + "<td class=\"num\">" + String(h.degraded) + "</td></tr>\n"
        }
        out += "</tbody>\n</table>\n"
    }

    private func figure(_ label: String, _ value: String, into out: inout String, tone: String = "") {
        out += "<div class=\"figure \(tone)\"><span class=\"value\">" + HTML.text(value) + "</span><span class=\"label\">"
            + HTML.text(label) + "</span></div>\n"
    }

    /// The table of causes; with `bars`, each with a bar for its share of the downtime.
    private func causes(_ list: [(cause: Cause, count: Int, downtime: Int64)], into out: inout String, bars: Bool) {
        guard !list.isEmpty else {
            out += "<p class=\"none\">" + HTML.text(tr("No outages in this span.")) + "</p>\n"
            return
        }
        out += "<table class=\"causes\">\n<thead><tr><th>" + HTML.text(tr("Failed")) + "</th><th>" + HTML.text(tr("Outages"))
            + "</th><th>" + HTML.text(tr("Downtime")) + "</th>" + (bars ? "<th class=\"bar\"></th>" : "") + "</tr></thead>\n<tbody>\n"
        let longest = max(1, list.map(\.downtime).max() ?? 1)
        for c in list {
            out += "<tr class=\"cause-\(c.cause.rawValue)\"><td><span class=\"swatch\"></span>" + HTML.text(c.cause.name(translator))
                + "</td><td class=\"num\">\(c.count)</td><td class=\"num\">" + HTML.text(duration(c.downtime)) + "</td>"
            if bars {
                let width = max(0.5, Double(c.downtime) / Double(longest) * 100)
                out += "<td class=\"bar\"><svg viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" role=\"img\"><rect x=\"0\" y=\"1\" height=\"8\" width=\""
                    + Self.number(width) + "\"/></svg></td>"
            }
            out += "</tr>\n"
        }
        out += "</tbody>\n</table>\n"
    }

    private func legend(into out: inout String) {
        out += "<ul class=\"legend\">"
        let items: [(String, String)] = [
            ("up", tr("online")), ("portal", tr("sign-in page")), ("limited", tr("limited")), ("offline", tr("offline")),
            ("asleep", tr("asleep")), ("stopped", tr("Lifeline not running")), ("unrecorded", tr("not recorded")),
        ]
        for (cls, label) in items {
            out += "<li><svg viewBox=\"0 0 14 10\" class=\"key\"><rect class=\"\(cls)\" width=\"14\" height=\"10\"/></svg>" + HTML.text(label) + "</li>"
        }
        out += "</ul>\n"
    }

    // MARK: A week's page

    private func weekPage(_ week: Report.Week, into out: inout String) {
        out += "<section class=\"sheet week\">\n<header><h2>" + HTML.text(weekName(week)) + "</h2>\n<p class=\"week-figures\">"
        out += HTML.text(tr("Availability {percent}, down {downtime} in {count} outages; asleep {asleep}; Lifeline not running {stopped}.", [
            "percent": week.tally.availabilityText, "downtime": duration(week.tally.down), "count": String(week.rows.count),
            "asleep": duration(week.tally.asleep), "stopped": duration(week.tally.notRunning),
        ]))
        out += "</p></header>\n<div class=\"days\">\n<div class=\"day axis\"><span></span><div class=\"hours\">"
        for hour in stride(from: 0, through: 24, by: 3) {
            out += "<span style=\"left:" + Self.number(Double(hour) / 24 * 100) + "%\">" + (hour < 10 ? "0" : "") + "\(hour)</span>"
        }
        out += "</div><span></span></div>\n"
        for day in week.days { dayRow(day, into: &out) }
        out += "</div>\n"
        legend(into: &out)
        out += "<h3>" + HTML.text(tr("Causes")) + "</h3>\n"
        causes(Report.causes(week.rows), into: &out, bars: false)
        outages(week.rows, into: &out)
        out += "</section>\n"
    }

    private func dayRow(_ day: Report.Day, into out: inout String) {
        let length = Double(max(1, day.end - day.start))
        out += "<div class=\"day\"><span class=\"date\">" + HTML.text(dayName(day.start)) + "</span>"
        out += "<svg viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" class=\"timeline\" role=\"img\">"
        out += "<rect class=\"unrecorded\" width=\"1000\" height=\"20\"/>"
        func x(_ t: Int64) -> Double { Double(min(max(t, day.start), day.end) - day.start) / length * 1000 }
        let shown = report.window.lowerBound..<report.window.upperBound
        for s in report.timeline.segments(overlapping: max(day.start, shown.lowerBound)..<min(day.end, shown.upperBound)) {
            let from = x(max(s.start, shown.lowerBound)), to = x(min(s.end, shown.upperBound))
            let cls: String
            switch s.activity {
            case .up: cls = "up"
            case .down(let state): cls = state.rawValue
            case .asleep: cls = "asleep"
            case .notRunning: cls = "stopped"
            case .unknown: continue
            }
            // Outages of a few seconds stay visible: at least a hairline.
            let width = s.activity.isDown ? max(to - from, 1.5) : to - from
            guard width > 0 else { continue }
            out += "<rect class=\"\(cls)\" x=\"" + Self.number(from) + "\" width=\"" + Self.number(width) + "\" height=\"20\"/>"
        }
        for hour in stride(from: 3, to: 24, by: 3) {
            let x = Self.number(Double(hour) / 24 * 1000)
            out += "<line x1=\"\(x)\" x2=\"\(x)\" y1=\"0\" y2=\"20\"/>"
        }
        out += "</svg><span class=\"avail\">" + day.tally.availabilityText + "<small>"
            + HTML.text(day.tally.down > 0 ? tr("{downtime} down", ["downtime": duration(day.tally.down)]) : "") + "</small></span></div>\n"
    }

    private func outages(_ rows: [OutageRow], into out: inout String) {
        out += "<h3>" + HTML.text(tr("Outages")) + "</h3>\n"
        guard !rows.isEmpty else {
            out += "<p class=\"none\">" + HTML.text(tr("No outages this week.")) + "</p>\n"
            return
        }
        var shown = rows
        if rows.count > Self.rowsPerWeek {
            // The longest, in the order they happened.
            let kept = Set(rows.indices.sorted { rows[$0].duration > rows[$1].duration }.prefix(Self.rowsPerWeek))
            shown = rows.indices.filter(kept.contains).map { rows[$0] }
        }
        out += "<table class=\"outages\">\n<thead><tr>"
        for heading in [tr("Start"), tr("End"), tr("Duration"), tr("Worst state"), tr("Failed"), tr("Reason")] {
            out += "<th>" + HTML.text(heading) + "</th>"
        }
        out += "</tr></thead>\n<tbody>\n"
        for row in shown {
            out += "<tr class=\"cause-\(row.cause.rawValue)\"><td class=\"time\">" + HTML.text(dateTime(row.start, seconds: true))
                + "</td><td class=\"time\">" + HTML.text(ending(row)) + "</td><td class=\"num\">" + HTML.text(duration(row.duration))
                + "</td><td><span class=\"state \(row.worst.rawValue)\">" + HTML.text(stateName(row.worst)) + "</span></td><td><span class=\"swatch\"></span>"
                + HTML.text(layerText(row)) + "</td><td class=\"reason\">" + HTML.text(TerminalText.visible(row.reason)) + "</td></tr>\n"
        }
        out += "</tbody>\n</table>\n"
        if shown.count < rows.count {
            let rest = rows.count - shown.count
            let restDown = rows.reduce(0) { $0 + $1.duration } - shown.reduce(0) { $0 + $1.duration }
            out += "<p class=\"more\">" + HTML.text(translator.trn(
                "and {count} shorter outage, {downtime} in all: `lifeline history --csv` lists every one.",
                "and {count} shorter outages, {downtime} in all: `lifeline history --csv` lists every one.",
                rest, ["count": String(rest), "downtime": duration(restDown)])) + "</p>\n"
        }
    }

    // MARK: Words and numbers

    private func stateName(_ state: ConnectivityState) -> String {
        state == .portal ? tr("sign-in page") : translator.stateName(state)
    }

    private func layerText(_ row: OutageRow) -> String {
        let group = row.cause.name(translator)
        guard row.layer != .none, row.cause != .dns, row.cause != .portal else { return group }
        return tr("{group} ({layer})", ["group": group, "layer": row.layer.rawValue])
    }

    private func ending(_ row: OutageRow) -> String {
        let end = dateTime(row.end, seconds: true, sameDayAs: row.start)
        switch row.ending {
        case .online, .unknown: return end
        case .asleep: return tr("{time}, went to sleep", ["time": end])
        case .stopped: return tr("{time}, Lifeline stopped", ["time": end])
        case .ongoing: return tr("ongoing")
        }
    }

    private func duration(_ micros: Int64) -> String { translator.duration(.microseconds(micros)) }

    private func weekdayName(_ micros: Int64) -> String {
        switch LocalDays.weekday(micros) {
        case 0: tr("Sunday")
        case 1: tr("Monday")
        case 2: tr("Tuesday")
        case 3: tr("Wednesday")
        case 4: tr("Thursday")
        case 5: tr("Friday")
        default: tr("Saturday")
        }
    }

    /// "Monday 2026-11-23".
    private func dayName(_ micros: Int64) -> String {
        tr("{weekday} {date}", ["weekday": weekdayName(micros), "date": isolated(LocalDays.format(micros, "%Y-%m-%d"))])
    }

    /// A date or time kept left to right inside a right-to-left sentence (the
    /// bidirectional algorithm would otherwise show 2026-03-16 as 16-03-2026).
    private func isolated(_ text: String) -> String {
        language.direction == "rtl" ? "\u{2066}" + text + "\u{2069}" : text
    }

    private func weekName(_ week: Report.Week) -> String {
        tr("Week of {date}", ["date": dayName(week.start)])
    }

    /// "2026-11-23 14:05", or only the time when it is on the day of `sameDayAs`.
    private func dateTime(_ micros: Int64, seconds: Bool = false, sameDayAs other: Int64? = nil) -> String {
        let time = seconds ? "%H:%M:%S" : "%H:%M"
        if let other, LocalDays.midnight(of: other) == LocalDays.midnight(of: micros) { return isolated(LocalDays.format(micros, time)) }
        return isolated(LocalDays.format(micros, "%Y-%m-%d " + time))
    }

    /// Two decimals at most, no exponent: SVG coordinates.
    static func number(_ x: Double) -> String {
        let hundredths = Int((x * 100).rounded())
        let whole = hundredths / 100, rest = hundredths % 100
        return rest == 0 ? String(whole) : String(whole) + "." + (rest < 10 ? "0" : "") + String(rest)
    }

    // MARK: Looks

    /// The stripes for time asleep and time not running, defined once and used by every timeline.
    static let patterns = """
        <svg class="defs" width="0" height="0" aria-hidden="true"><defs>\
        <pattern id="p-asleep" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
        <rect width="6" height="6" fill="#b9c3d0"/><rect width="3" height="6" fill="#8795a8"/></pattern>\
        <pattern id="p-stopped" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">\
        <rect width="6" height="6" fill="#eceef1"/><rect width="1.5" height="6" fill="#a7adb5"/></pattern>\
        </defs></svg>

        """

    static let style = """
        :root { --up: #5bb974; --portal: #9b6dd7; --limited: #f2a600; --offline: #d93025; --ink: #1f2328; --muted: #5f6b7a; --rule: #d8dde3; }
        * { box-sizing: border-box; }
        html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
        body { margin: 0; background: #eef1f4; color: var(--ink); font: 10.5pt/1.4 system-ui, "Noto Sans", "DejaVu Sans", "NanumGothic", sans-serif; }
        .sheet { background: #fff; width: 210mm; min-height: 297mm; margin: 8mm auto; padding: 14mm 13mm; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
        h1 { font-size: 22pt; margin: 0 0 2mm; letter-spacing: -.01em; }
        h2 { font-size: 14pt; margin: 7mm 0 2.5mm; }
        .week h2 { margin-top: 0; }
        h3 { font-size: 11pt; margin: 5mm 0 2mm; }
        header p { margin: 0; color: var(--muted); }
        .figures { display: grid; grid-template-columns: repeat(3, 1fr); gap: 3mm; margin: 7mm 0 3mm; }
        .figure { border: 1px solid var(--rule); border-radius: 2mm; padding: 3mm 4mm; }
        .figure .value { display: block; font-size: 17pt; font-weight: 600; font-variant-numeric: tabular-nums; }
        .figure.main .value { color: #137333; }
        .figure.quiet .value { color: var(--muted); }
        .figure .label { color: var(--muted); font-size: 9pt; }
        .note { color: var(--muted); font-size: 9pt; margin: 2mm 0 0; }
        table { border-collapse: collapse; width: 100%; font-size: 9.5pt; }
        th { text-align: start; font-weight: 600; color: var(--muted); border-bottom: 1.5px solid var(--ink); padding: 1.2mm 2mm; }
        td { border-bottom: 1px solid var(--rule); padding: 1.1mm 2mm; vertical-align: top; }
        td.num { text-align: end; font-variant-numeric: tabular-nums; white-space: nowrap; }
        td.time { white-space: nowrap; font-variant-numeric: tabular-nums; }
        td.reason { color: var(--muted); overflow-wrap: anywhere; }
        td.bar { width: 45%; }
        td.bar svg { width: 100%; height: 3mm; display: block; }
        .causes { width: auto; min-width: 60%; }
        .summary .causes { width: 100%; }
        .swatch { display: inline-block; width: 2.4mm; height: 2.4mm; border-radius: 50%; margin-inline-end: 1.6mm; background: var(--muted); }
        .cause-device .swatch, .cause-device td.bar rect { background: #4f7cff; fill: #4f7cff; }
        .cause-tunnel .swatch, .cause-tunnel td.bar rect { background: #00897b; fill: #00897b; }
        .cause-router .swatch, .cause-router td.bar rect { background: #ef6c00; fill: #ef6c00; }
        .cause-dns .swatch, .cause-dns td.bar rect { background: #c2185b; fill: #c2185b; }
        .cause-beyond .swatch, .cause-beyond td.bar rect { background: #d93025; fill: #d93025; }
        .cause-portal .swatch, .cause-portal td.bar rect { background: #9b6dd7; fill: #9b6dd7; }
        .cause-check_servers .swatch, .cause-check_servers td.bar rect { background: #795548; fill: #795548; }
        .cause-unknown .swatch, .cause-unknown td.bar rect { background: #9aa0a6; fill: #9aa0a6; }
        .state { display: inline-block; padding: 0 1.5mm; border-radius: 1mm; font-size: 8.5pt; font-weight: 600; color: #fff; }
        .state.offline { background: var(--offline); } .state.limited { background: var(--limited); color: #3b2a00; } .state.portal { background: var(--portal); }
        .days { margin: 4mm 0 2mm; }
        .day { display: grid; grid-template-columns: 38mm 1fr 30mm; align-items: center; column-gap: 3mm; margin-bottom: 2.2mm; }
        .day .date { font-size: 9.5pt; white-space: nowrap; }
        .day .avail { text-align: end; font-variant-numeric: tabular-nums; font-weight: 600; font-size: 9.5pt; }
        .day .avail small { display: block; font-weight: 400; color: var(--muted); font-size: 8pt; }
        svg.timeline { width: 100%; height: 8mm; display: block; border-radius: 1mm; direction: ltr; }
        svg.timeline line { stroke: #fff; stroke-opacity: .55; stroke-width: 1; vector-effect: non-scaling-stroke; }
        .hours { position: relative; height: 3.6mm; direction: ltr; font-size: 7.5pt; color: var(--muted); font-variant-numeric: tabular-nums; }
        .hours span { position: absolute; top: 0; transform: translateX(-50%); }
        .hours span:first-child { transform: none; } .hours span:last-child { transform: translateX(-100%); }
        .day.axis { margin-bottom: .8mm; }
        rect.up { fill: var(--up); } rect.portal { fill: var(--portal); } rect.limited { fill: var(--limited); } rect.offline { fill: var(--offline); }
        rect.asleep { fill: url(#p-asleep); } rect.stopped { fill: url(#p-stopped); } rect.unrecorded { fill: #f1f3f4; }
        .legend { list-style: none; padding: 0; margin: 3mm 0; display: flex; flex-wrap: wrap; gap: 1.5mm 5mm; font-size: 8.5pt; color: var(--muted); }
        .legend li { display: flex; align-items: center; gap: 1.5mm; }
        svg.key { width: 4.5mm; height: 3.2mm; border-radius: .6mm; }
        .none, .more { color: var(--muted); font-size: 9pt; }
        svg.defs { position: absolute; }
        @page { size: A4; margin: 0; }
        @media print {
          body { background: #fff; }
          .sheet { margin: 0; box-shadow: none; height: 297mm; overflow: hidden; break-after: page; }
          .sheet:last-of-type { break-after: auto; }
        }

        """
}

/// The page's language: the user's when a catalog for it was found, else English.
public struct PageLanguage: Sendable, Equatable {
    /// BCP 47, as `lang` takes it: "en", "ko", "fa".
    public var tag: String
    public var direction: String { Self.rightToLeft.contains(tag) ? "rtl" : "ltr" }

    static let rightToLeft: Set<String> = ["ar", "fa", "he", "ur", "ps", "yi", "ckb", "dv", "sd", "ug"]

    public init(tag: String) { self.tag = tag }

    /// The language gettext chose: the first of `LANGUAGE`, `LC_ALL`,
    /// `LC_MESSAGES`, `LANG` that names one; English when nothing is translated.
    public static func user(translating: Bool, environment: (String) -> String?) -> PageLanguage {
        guard translating else { return PageLanguage(tag: "en") }
        for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment(name), !value.isEmpty else { continue }
            let first = value.split(separator: ":").first.map(String.init) ?? value
            let language = first.prefix { $0.isLetter && $0.isASCII }.lowercased()
            if language.isEmpty || language == "c" || language == "posix" { continue }
            return PageLanguage(tag: language)
        }
        return PageLanguage(tag: "en")
    }
}

/// Text put into HTML: every character that could start markup is an entity,
/// and control characters are dropped.
public enum HTML {
    public static func text(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case let c where c.value < 0x20 || (0x7F...0x9F).contains(c.value): continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension ReportPage {
    /// The page in the user's language (the one gettext chose), written at `writtenAt`.
    public static func user(_ report: Report, writtenAt: Int64) -> ReportPage {
        let translator = Translator.user
        let language = PageLanguage.user(translating: translator.isTranslating) { Environment.value($0) }
        return ReportPage(report: report, translator: translator, language: language, writtenAt: writtenAt)
    }
}
