extension StateEvent {
    /// What the state goes through, for a person: "Home Wi-Fi (wifi, metered)"
    /// when the connection's name is known, else "wlan0 (wifi)"; "" with neither.
    /// The status line and the toast both say it this way.
    public var connectionText: String {
        let name = connection.isEmpty ? interface : connection
        guard !name.isEmpty else { return "" }
        let details = [kind == .none ? nil : kind.rawValue, metered ? "metered" : nil].compactMap { $0 }
        return details.isEmpty ? name : "\(name) (\(details.joined(separator: ", ")))"
    }
}
