import Glibc
import LifelineCore
import LifelinePlatform

/// Every sentence the tray icon shows a person, in one place, in the user's
/// language. Placeholders in braces are filled in after the translation, so a
/// language can put them where its grammar wants them.
func trayText(_ english: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
    Translator.user.tr(english, values)
}

enum TrayText {
    static var checkNow: String { trayText("Check now") }
    static var mute: String { trayText("Mute for 1 hour") }
    static var unmute: String { trayText("Unmute") }
    static var recentOutages: String { trayText("Recent outages") }
    static var noOutages: String { trayText("No outages recorded") }
    static var openLog: String { trayText("Open log") }
    static var openReport: String { trayText("Open report") }
    static var signIn: String { trayText("Open sign-in page") }
    static var venue: String { trayText("Venue information") }
    /// The item's title, for hosts that list their items by name.
    static let title = "Lifeline"

    /// The tooltip's heading: what state the connection is in.
    static func heading(_ state: ConnectivityState) -> String {
        switch state {
        case .online: trayText("Online")
        case .offline: trayText("Offline")
        case .limited: trayText("Connected, but no internet")
        case .portal: trayText("Sign in to the network")
        case .unknown: trayText("Checking the connection")
        }
    }

    /// The tooltip's text: since when, through what, why, and which layer failed first.
    static func sentence(_ e: StateEvent) -> String {
        var lines: [String] = []
        let since = clock(e.since)
        if e.connectionText.isEmpty {
            lines.append(trayText("Since {time}.", ["time": since]))
        } else {
            lines.append(trayText("Since {time}, on {connection}.", ["time": since, "connection": e.connectionText]))
        }
        let reason = e.reasonText(Translator.user)
        if !reason.isEmpty { lines.append(visible(reason)) }
        if e.diagnosis != .none {
            lines.append(trayText("Failed first: {layer}.", ["layer": layer(e.diagnosis)]))
        }
        if let left = sessionLeft(e.captivePortal) { lines.append(left) }
        if let q = e.quality { lines += quality(q) }
        return lines.joined(separator: "\n")
    }

    /// What the network's captive-portal API said is left of the session, as
    /// of its last answer: "Session: 12 min, 40 MB left."; nil when it said nothing.
    static func sessionLeft(_ portal: CaptivePortal?) -> String? {
        guard let portal, portal.captive == false else { return nil }
        var parts: [String] = []
        if let s = portal.secondsRemaining { parts.append(Translator.user.duration(.seconds(s))) }
        if let b = portal.bytesRemaining { parts.append(CaptivePortal.amount(b)) }
        guard !parts.isEmpty else { return nil }
        return trayText("Session: {left} left.", ["left": parts.joined(separator: ", ")])
    }

    /// How well the connection works, and the numbers behind it when known.
    static func quality(_ q: Quality) -> [String] {
        let level = switch q.level {
        case .good: trayText("good")
        case .degraded: trayText("degraded")
        case .poor: trayText("poor")
        }
        var lines = [trayText("Quality: {level}.", ["level": level])]
        if let rtt = q.rttMs, let share = q.retransmitShare {
            let tenths = Int((share * 1000).rounded())
            lines.append(trayText("Round trip {rtt} ms, {share} % retransmitted.",
                                  ["rtt": String(Int(rtt.rounded())), "share": "\(tenths / 10).\(tenths % 10)"]))
        }
        return lines
    }

    /// A line of the "Recent outages" submenu.
    static func outage(_ o: OutageRecord, now: Int64) -> String {
        let worst = o.worst == .offline ? trayText("offline") : trayText("no internet")
        let lasted = Translator.user.duration(o.duration(now: now))
        if o.end == nil {
            return trayText("{start}: {worst}, ongoing for {duration}", ["start": day(o.start), "worst": worst, "duration": lasted])
        }
        return trayText("{start}: {worst} for {duration}", ["start": day(o.start), "worst": worst, "duration": lasted])
    }

    static func layer(_ d: Diagnosis) -> String {
        switch d {
        case .link: trayText("the network interface")
        case .carrier: trayText("the cable or Wi-Fi association")
        case .address: trayText("the address")
        case .route: trayText("the route")
        case .gateway: trayText("the router")
        case .tunnel: trayText("the VPN tunnel")
        case .dns: trayText("name lookup (DNS)")
        case .tcp: trayText("the connection to the check server")
        case .tls: trayText("the secure connection (TLS)")
        case .http: trayText("the check server's answer")
        case .portal: trayText("a sign-in page (captive portal)")
        case .none: ""
        }
    }

    /// A reason comes from the network or another program: control characters
    /// and bidirectional overrides are dropped, and it is kept to one short line.
    static func visible(_ text: String, limit: Int = 200) -> String {
        var out = ""
        var kept = 0
        for scalar in text.unicodeScalars where !MarkupText.isControl(scalar) {
            if kept == limit { out += "…"; break }
            out.unicodeScalars.append(scalar)
            kept += 1
        }
        return out
    }

    /// "14:02", local time.
    static func clock(_ micros: Int64) -> String { local(micros, "%H:%M") }

    /// "Nov 23 14:02", local time.
    static func day(_ micros: Int64) -> String { local(micros, "%b %d %H:%M") }

    private static func local(_ micros: Int64, _ format: String) -> String {
        var seconds = time_t(micros / 1_000_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "?" }
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, format, &parts)
        return n == 0 ? "?" : String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
