import LifelinePlatform

extension StateEvent {
    /// What the state goes through, for a person: "Home Wi-Fi (wifi, metered)"
    /// when the connection's name is known, else "wlan0 (wifi)"; "" with neither.
    /// The status line and the toast both say it this way.
    public var connectionText: String { connectionText(.english) }

    /// `connectionText` in the language of `t`: the name as it is, the details translated.
    public func connectionText(_ t: Translator) -> String {
        let name = connection.isEmpty ? interface : connection
        guard !name.isEmpty else { return "" }
        let details: String? = switch (kind == .none ? nil : t.kindName(kind), metered) {
        case (nil, false): nil
        case (nil, true): t.tr("metered")
        case (let kind?, false): kind
        case (let kind?, true): t.tr("{kind}, metered", ["kind": kind])
        }
        // Translators: a connection's or interface's name, then its kind and whether it is metered.
        let text = details.map { t.tr("{name} ({details})", ["name": name, "details": $0]) } ?? name
        guard !underneath.isEmpty else { return text }
        let below = underneathKind == .none ? underneath
            : t.tr("{name} ({details})", ["name": underneath, "details": t.kindName(underneathKind)])
        // Translators: a VPN and the connection that carries it: "wg0 (vpn) over wlan0 (wifi)".
        return t.tr("{connection} over {underneath}", ["connection": text, "underneath": below])
    }
}
