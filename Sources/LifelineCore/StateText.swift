import LifelinePlatform

/// The words and sentences a person reads about a state, from its fields, in
/// the language of a `Translator`. `Translator.english` gives the English that
/// programs and the log have always seen: the state's and kind's own names,
/// the event's own reason.
extension Translator {
    /// "online", "offline"… (English: the value programs read).
    public func stateName(_ state: ConnectivityState) -> String {
        switch state {
        case .online: tr("online")
        case .offline: tr("offline")
        // Translators: the state's name in the status line: connected, but the internet does not answer.
        case .limited: tr("limited")
        // Translators: the state's name in the status line: a login page (captive portal) answers for the internet.
        case .portal: tr("portal")
        case .unknown: tr("unknown")
        }
    }

    /// "wifi", "ethernet"… (English: the value programs read).
    public func kindName(_ kind: InterfaceKind) -> String {
        switch kind {
        case .ethernet: tr("ethernet")
        case .wifi: tr("wifi")
        case .wwan: tr("wwan")
        case .vpn: tr("vpn")
        case .other: tr("other")
        case .none: ""
        }
    }

    /// A duration for people, "2m 13s", "45s", "1h 5m", with the units in this
    /// language (English: exactly `DurationText.human`).
    public func duration(_ d: Duration) -> String {
        let total = max(0, d.microseconds / 1_000_000)
        let (h, m, s) = (String(total / 3600), String((total % 3600) / 60), String(total % 60))
        // Translators: {h}, {m}, {s} are hours, minutes, seconds: "2m 13s", "1h 5m".
        if total >= 3600 { return total % 3600 >= 60 ? tr("{h}h {m}m", ["h": h, "m": m]) : tr("{h}h", ["h": h]) }
        if total >= 60 { return total % 60 > 0 ? tr("{m}m {s}s", ["m": m, "s": s]) : tr("{m}m", ["m": m]) }
        return tr("{s}s", ["s": s])
    }
}

extension StateEvent {
    /// Why the state is what it is, for a person. In English, the event's own
    /// reason: the sentence the monitor wrote, with the addresses and hosts it
    /// names ("DNS (192.168.1.1) could not resolve nmcheck.gnome.org: …").
    /// In another language that sentence cannot be translated (it carries text
    /// from the network), so the sentence is made from the structured fields:
    /// the layer that failed, the round trip, the families that do not work.
    /// Where they say nothing (a third-party monitor's own words), its reason
    /// is shown as written rather than nothing.
    public func reasonText(_ t: Translator) -> String {
        guard t.isTranslating else { return reason }
        if state == .online {
            let answered = rttMs >= 0 ? t.tr("probe answered in {ms} ms", ["ms": Self.millis(rttMs)]) : ""
            let broken = families.entries.filter { $0.state != .online }.map { $0.family == "ipv4" ? "IPv4" : "IPv6" }
            guard let family = broken.first else { return answered }
            let notWorking = t.tr("{family} does not work", ["family": family])
            // Translators: two sentences about the connection, one after the other.
            return answered.isEmpty ? notWorking : t.tr("{first}; {second}", ["first": notWorking, "second": answered])
        }
        return diagnosis.sentence(t, interface: interface) ?? reason
    }

    /// "23", "4.5": whole milliseconds, one decimal under 10 ms (as the probe writes them).
    static func millis(_ ms: Double) -> String {
        guard ms.isFinite, ms < 1e9 else { return "?" }
        if ms >= 10 { return String(Int(ms.rounded())) }
        let tenths = Int((ms * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

extension Diagnosis {
    /// What failed, as one sentence a person can act on; nil when nothing is known.
    public func sentence(_ t: Translator, interface: String) -> String? {
        let named = !interface.isEmpty
        switch self {
        case .link:
            return named ? t.tr("{interface} is down", ["interface": interface]) : t.tr("The network interface is down")
        case .carrier:
            return named ? t.tr("{interface} has no cable or Wi-Fi connection", ["interface": interface])
                : t.tr("No cable or Wi-Fi connection")
        case .address:
            return named ? t.tr("{interface} has no IP address", ["interface": interface]) : t.tr("No IP address")
        case .route: return t.tr("No default route")
        case .gateway: return t.tr("The router does not answer")
        case .tunnel: return t.tr("The VPN tunnel passes no traffic; the connection underneath works")
        case .dns: return t.tr("The DNS server does not answer")
        case .tcp: return t.tr("The check server cannot be reached")
        case .tls: return t.tr("The secure connection (TLS) fails")
        case .http: return t.tr("The check server does not answer as expected")
        case .portal: return t.tr("A sign-in page answers instead of the internet")
        case .none: return nil
        }
    }
}
