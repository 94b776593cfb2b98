import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineFormats
import LifelineNet
import LifelinePlatform
import ProbeMonitor

struct DiagnoseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagnose",
        abstract: "Check every layer now, from the cable to HTTP, and say which one fails.",
        discussion: """
            Walks link, carrier, address, default route, gateway (ARP), DNS, TCP and HTTP for each \
            address family that has a default route, with the time each check took, and stops a family \
            at its first failure, with the first check URL; then asks every check URL once and shows \
            each one's verdict. Online when any of them answers as expected. Through a VPN tunnel, the \
            gateway row gives way to the tunnel's row and the link underneath it, read without sending \
            anything outside the tunnel. Needs no daemon. The probe URLs and timeout come from the \
            config's probe monitor (--config FILE, else the user's, else the defaults). Exits 0 when \
            online, 1 when not, 2 when the config does not load.
            """
    )

    @Flag(help: "Print the checks and the verdict as one JSON object.")
    var json = false

    @Option(help: "The check URL (default: the config's probe urls).")
    var url: String?

    @Option(help: "Timeout of each network check (default: the config's probe timeout).")
    var timeout: String?

    @Option(name: .long, help: "Config file whose probe settings to use (default: the user's).")
    var config: String?

    func run() throws {
        let probe: ProbeMonitor.Config
        do { probe = try Self.configuredProbe(explicitPath: config) } catch {
            // A config that does not load is an error, not a reason to check with other settings.
            printError("\(error)")
            throw ExitCode(2)
        }
        let wait: Duration
        do { wait = try timeout.map { try DurationText.parse($0) } ?? probe.timeout.duration } catch {
            printError("--timeout: \(error)")
            throw ExitCode.validationFailure
        }
        let report = LayerWalk.run(urls: url.map { [$0] } ?? probe.url.list, timeout: wait, expecting: probe.expectedReply)
        // What the network announced, as the running daemon last heard it and its API last answered.
        let portal = CurrentState.read()?.event.captivePortal
        print(json ? Self.json(report, portal: portal) : Self.checklist(report, marks: Marks.forLocale(), .user, portal: portal),
              terminator: "")
        throw ExitCode(report.state == .online ? 0 : 1)
    }

    /// The first probe monitor of the config (`explicitPath`, else the user's),
    /// else the probe's defaults.
    static func configuredProbe(explicitPath: String? = nil) throws -> ProbeMonitor.Config {
        let config = try ConfigLoader.load(explicitPath: explicitPath, paths: .fromEnvironment())
        return config.monitors.lazy.compactMap { $0.config as? ProbeMonitor.Config }.first ?? .defaults
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

    static func layerName(_ d: Diagnosis, _ t: Translator = .english) -> String {
        switch d {
        case .link: t.tr("link")
        case .carrier: t.tr("carrier")
        case .address: t.tr("address")
        case .route: t.tr("default route")
        case .gateway: t.tr("gateway")
        case .tunnel: t.tr("VPN tunnel")
        case .dns: t.tr("DNS")
        case .tcp: t.tr("TCP")
        case .tls: t.tr("TLS")
        case .http: t.tr("HTTP")
        case .portal: t.tr("portal")
        case .none: ""
        }
    }

    /// One block per family, one line per layer, then the verdict. The labels and
    /// the verdict are in the language of `t`; each check's detail (addresses,
    /// hosts, the system's error) is shown as measured.
    static func checklist(_ r: LayerWalk.Report, marks: Marks, _ t: Translator = .english, portal: CaptivePortal? = nil) -> String {
        var out = ""
        var family = ""
        let width = max(marks.ok.count, marks.fail.count, marks.skipped.count)
        let labelWidth = max(14, (r.steps.map { columns(layerName($0.layer, t)) }.max() ?? 0) + 1)
        for step in r.steps {
            if step.family != family {
                family = step.family
                out += (family == "ipv4" ? "IPv4" : "IPv6") + "\n"
            }
            let mark = marks.mark(step.mark)
            let time = step.mark == .skipped && step.milliseconds == 0 ? "" : "  " + Self.millis(step.milliseconds)
            out += "  " + mark + String(repeating: " ", count: width - mark.count) + "  "
                + pad(layerName(step.layer, t), labelWidth) + TerminalText.visible(step.detail) + time + "\n"
        }
        if !r.endpoints.isEmpty { out += t.tr("Check servers") + "\n" }
        for endpoint in r.endpoints {
            let mark = endpoint.state == .online ? marks.ok : marks.fail
            out += "  " + mark + String(repeating: " ", count: width - mark.count) + "  "
                + TerminalText.visible(endpoint.url) + ": " + t.stateName(endpoint.state) + ", "
                + TerminalText.visible(endpoint.detail) + "  " + Self.millis(endpoint.milliseconds) + "\n"
        }
        if let portal { out += captivePortalLines(portal, t) }
        var verdict = StateEvent(state: r.state, previous: .unknown, since: 0, reason: r.reason, sequence: 0)
        verdict.diagnosis = r.diagnosis
        verdict.families = r.families
        let reason = verdict.reasonText(t)
        let state = t.stateName(r.state)
        out += (reason.isEmpty ? state : t.tr("{state}: {reason}", ["state": state, "reason": TerminalText.visible(reason)]))
            + "\n"
        return out
    }

    /// The network's captive-portal announcement, where it came from, and its
    /// API's last answer, as the daemon holds them; the labels in the language
    /// of `t`, the network's URLs as they were given.
    static func captivePortalLines(_ p: CaptivePortal, _ t: Translator = .english) -> String {
        var out = t.tr("Captive-portal API") + "\n"
        out += "  " + TerminalText.visible(p.api) + " (" + announcer(p.source) + ")\n"
        guard let captive = p.captive else { return out + "  " + t.tr("no answer yet") + "\n" }
        var answer = [captive ? t.tr("sign-in required") : t.tr("signed in")]
        if let s = p.secondsRemaining { answer.append(t.tr("{time} left", ["time": t.duration(.seconds(s))])) }
        if let b = p.bytesRemaining { answer.append(t.tr("{amount} left", ["amount": CaptivePortal.amount(b)])) }
        if p.canExtendSession == true { answer.append(t.tr("can be extended")) }
        out += "  " + answer.joined(separator: ", ") + "\n"
        if let url = p.userPortalURL { out += "  " + t.tr("sign-in page: {url}", ["url": TerminalText.visible(url)]) + "\n" }
        if let url = p.venueInfoURL { out += "  " + t.tr("venue information: {url}", ["url": TerminalText.visible(url)]) + "\n" }
        return out
    }

    /// Who announced the API, by the names the user knows them by.
    static func announcer(_ source: CaptivePortalSource) -> String {
        switch source {
        case .ra: "Router Advertisement"
        case .dhcp4: "DHCPv4"
        case .dhcp6: "DHCPv6"
        case .networkd: "systemd-networkd"
        case .networkmanager: "NetworkManager"
        }
    }

    static func millis(_ ms: Double) -> String {
        ms < 10 ? "(\(Double(Int(ms * 10)) / 10) ms)" : "(\(Int(ms.rounded())) ms)"
    }

    /// `s` padded with spaces to `n` terminal columns (at least one space after it).
    static func pad(_ s: String, _ n: Int) -> String {
        let used = columns(s)
        return used >= n ? s + " " : s + String(repeating: " ", count: n - used)
    }

    /// Terminal columns `s` takes: Hangul and the other East Asian wide
    /// characters take two, so a translated label still lines up.
    static func columns(_ s: String) -> Int {
        s.unicodeScalars.reduce(0) { sum, c in
            switch c.value {
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
                 0xFF00...0xFF60, 0xFFE0...0xFFE6: sum + 2
            case 0x0300...0x036F, 0x064B...0x065F, 0x200B...0x200F: sum  // combining marks, zero-width joiners
            default: sum + 1
            }
        }
    }

    static func json(_ r: LayerWalk.Report, portal: CaptivePortal? = nil) -> String {
        let checks = r.steps.map { s in
            "{" + [
                ("family", JSONText.quote(s.family)), ("layer", JSONText.quote(s.layer.rawValue)),
                ("result", JSONText.quote(s.mark.rawValue)), ("detail", JSONText.quote(s.detail)),
                ("ms", JSONText.number((s.milliseconds * 10).rounded() / 10)),
            ].map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        }
        let endpoints = r.endpoints.map { e in
            "{" + [
                ("url", JSONText.quote(e.url)), ("state", JSONText.quote(e.state.rawValue)),
                ("detail", JSONText.quote(e.detail)), ("ms", JSONText.number((e.milliseconds * 10).rounded() / 10)),
            ].map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        }
        let portalField = portal.map { [("captive_portal", JSONText.captivePortal($0))] } ?? []
        return "{" + ([
            ("state", JSONText.quote(r.state.rawValue)), ("diagnosis", JSONText.quote(r.diagnosis.rawValue)),
            ("reason", JSONText.quote(r.reason)), ("families", JSONText.families(r.families)),
            ("checks", "[" + checks.joined(separator: ",") + "]"),
            ("endpoints", "[" + endpoints.joined(separator: ",") + "]"),
        ] + portalField).map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}\n"
    }
}
