import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineProtocol
import ProbeMonitor

struct DiagnoseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagnose",
        abstract: "Check every layer now, from the cable to HTTP, and say which one fails.",
        discussion: """
            Walks link, carrier, address, default route, gateway (ARP), DNS, TCP and HTTP for each \
            address family that has a default route, with the time each check took, and stops a family \
            at its first failure. Needs no daemon. The probe URL and timeout come from the config's \
            probe monitor (or the defaults). Exits 0 when online, 1 when not.
            """
    )

    @Flag(help: "Print the checks and the verdict as one JSON object.")
    var json = false

    @Option(help: "The check URL (default: the config's probe url).")
    var url: String?

    @Option(help: "Timeout of each network check (default: the config's probe timeout).")
    var timeout: String?

    func run() throws {
        let probe = Self.configuredProbe()
        let wait: Duration
        do { wait = try timeout.map { try DurationText.parse($0) } ?? probe.timeout.duration } catch {
            printError("--timeout: \(error)")
            throw ExitCode.validationFailure
        }
        let report = LayerWalk.run(url: url ?? probe.url, timeout: wait, probe: probe)
        print(json ? Self.json(report) : Self.checklist(report, marks: Marks.forLocale()), terminator: "")
        throw ExitCode(report.state == .online ? 0 : 1)
    }

    /// The first probe monitor of the user's config, else the probe's defaults.
    static func configuredProbe() -> ProbeMonitor.Config {
        let config = try? ConfigLoader.load(explicitPath: nil, paths: .fromEnvironment())
        return config?.monitors.lazy.compactMap { $0.config as? ProbeMonitor.Config }.first ?? .defaults
    }

    /// ✓ ✗ – where the terminal's character set is UTF-8, plain ASCII elsewhere
    /// (a C locale, a serial console), so the marks never come out as garbage.
    struct Marks {
        var ok: String, fail: String, skipped: String

        static func forLocale(_ env: [String: String] = Environment.current) -> Marks {
            let locale = env["LC_ALL"].flatMap { $0.isEmpty ? nil : $0 } ?? env["LC_CTYPE"].flatMap { $0.isEmpty ? nil : $0 } ?? env["LANG"] ?? ""
            let utf8 = locale.lowercased().contains("utf-8") || locale.lowercased().contains("utf8")
            return utf8 ? Marks(ok: "✓", fail: "✗", skipped: "–") : Marks(ok: "ok", fail: "FAIL", skipped: "-")
        }

        func mark(_ m: LayerWalk.Mark) -> String {
            switch m {
            case .ok: ok
            case .fail: fail
            case .skipped: skipped
            }
        }
    }

    static func layerName(_ d: Diagnosis) -> String {
        switch d {
        case .route: "default route"
        case .dns: "DNS"
        case .tcp: "TCP"
        case .tls: "TLS"
        case .http: "HTTP"
        default: d.rawValue
        }
    }

    /// One block per family, one line per layer, then the verdict.
    static func checklist(_ r: LayerWalk.Report, marks: Marks) -> String {
        var out = ""
        var family = ""
        let width = max(marks.ok.count, marks.fail.count, marks.skipped.count)
        for step in r.steps {
            if step.family != family {
                family = step.family
                out += (family == "ipv4" ? "IPv4" : "IPv6") + "\n"
            }
            let mark = marks.mark(step.mark)
            let time = step.mark == .skipped && step.milliseconds == 0 ? "" : "  " + Self.millis(step.milliseconds)
            out += "  " + mark + String(repeating: " ", count: width - mark.count) + "  "
                + pad(layerName(step.layer), 14) + TerminalText.visible(step.detail) + time + "\n"
        }
        out += "\(r.state.rawValue): \(TerminalText.visible(r.reason))\n"
        return out
    }

    static func millis(_ ms: Double) -> String {
        ms < 10 ? "(\(Double(Int(ms * 10)) / 10) ms)" : "(\(Int(ms.rounded())) ms)"
    }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }

    static func json(_ r: LayerWalk.Report) -> String {
        let checks = r.steps.map { s in
            "{" + [
                ("family", JSONText.quote(s.family)), ("layer", JSONText.quote(s.layer.rawValue)),
                ("result", JSONText.quote(s.mark.rawValue)), ("detail", JSONText.quote(s.detail)),
                ("ms", JSONText.number((s.milliseconds * 10).rounded() / 10)),
            ].map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        }
        return "{" + [
            ("state", JSONText.quote(r.state.rawValue)), ("diagnosis", JSONText.quote(r.diagnosis.rawValue)),
            ("reason", JSONText.quote(r.reason)), ("families", JSONText.families(r.families)),
            ("checks", "[" + checks.joined(separator: ",") + "]"),
        ].map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}\n"
    }
}
