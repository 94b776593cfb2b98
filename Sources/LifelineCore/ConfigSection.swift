/// A table of settings whose every key has a default: a plugin's `Config`, the
/// `[debounce]` section. The config loader decodes one by starting from
/// `defaults` and overlaying the keys the file sets, so a type declares its keys
/// and their defaults once, as stored properties with initial values, and writes
/// no decoding code. Keys the type does not have are refused, and `validate()`
/// runs on the result.
public protocol ConfigSection: Codable, Sendable {
    /// Every key at its default: `Self()`. (A requirement `init()` would have to
    /// be written out, and would then cost the type its memberwise initializer.)
    static var defaults: Self { get }
    /// Refuses values that decode but make no sense (an empty command, a 0 s
    /// probe timeout). The loader adds the file and line to the error.
    func validate() throws(ConfigValueError)
}

extension ConfigSection {
    public func validate() throws(ConfigValueError) {}

    /// The one range check every numeric setting goes through, so that all of them
    /// read the same: "'keep': must be between 0 and 100, got 500".
    public func require<V: Comparable & CustomStringConvertible>(
        _ key: String, _ value: V, in range: ClosedRange<V>, unit: String = ""
    ) throws(ConfigValueError) {
        guard !range.contains(value) else { return }
        let suffix = unit.isEmpty ? "" : " " + unit
        throw ConfigValueError(key: key, "must be between \(range.lowerBound) and \(range.upperBound)\(suffix), got \(value)")
    }
}

/// A setting that is one of a few words (`family = "ipv4"`). The loader refuses
/// any other word with the list of the allowed ones.
public protocol ConfigChoice: RawRepresentable<String>, CaseIterable, Codable, Sendable {}

extension ConfigChoice {
    /// "\"any\", \"ipv4\" or \"ipv6\"", for error messages.
    public static var choices: String {
        let quoted = allCases.map { "\"\($0.rawValue)\"" }
        guard quoted.count > 1 else { return quoted.joined() }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
    }
}
