/// Durations as people write them in config and on the command line: "5s",
/// "250ms", "2m", "1h30m", "1d". A bare number is refused: the unit is the point.
public enum DurationText {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Problem: Sendable, Equatable {
            case notADuration
            /// Longer than `DurationText.limit`: refused before any arithmetic, so
            /// "2000000000000000d" is an error message, never an overflow.
            case tooLong
        }

        public var text: String
        public var problem: Problem

        public init(text: String, problem: Problem = .notADuration) {
            self.text = text
            self.problem = problem
        }

        public var description: String {
            switch problem {
            case .notADuration:
                "'\(text)' is not a duration (use a number and a unit: \"250ms\", \"5s\", \"2m\", \"1h\", \"1d\")"
            case .tooLong:
                "'\(text)' is too long a duration (at most \(DurationText.format(DurationText.limit)))"
            }
        }
    }

    /// The longest duration anyone writes (100 years). Every caller gets at most
    /// this, so adding a duration to a timestamp in microseconds cannot overflow.
    public static let limit = Duration.seconds(limitSeconds)
    private static let limitSeconds: Int64 = 100 * 365 * 86400

    private static let units: [(suffix: String, seconds: Double, size: Duration)] = [
        ("ms", 1e-3, .milliseconds(1)), ("us", 1e-6, .microseconds(1)), ("µs", 1e-6, .microseconds(1)),
        ("s", 1, .seconds(1)), ("m", 60, .seconds(60)), ("h", 3600, .seconds(3600)), ("d", 86400, .seconds(86400)),
    ]

    public static func parse(_ text: String) throws(ParseError) -> Duration {
        var rest = Substring(text.trimmingSpaces())
        guard !rest.isEmpty else { throw ParseError(text: text) }
        var total = Duration.zero
        var secondsSoFar = 0.0
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !digits.isEmpty, let value = Double(digits) else { throw ParseError(text: text) }
            rest = rest.dropFirst(digits.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }) else { throw ParseError(text: text) }
            rest = rest.dropFirst(unit.suffix.count)
            // Checked in floating point first: `Duration * Double` traps when the
            // product does not fit, and a config file must never crash the daemon.
            let seconds = value * unit.seconds
            guard seconds.isFinite, secondsSoFar + seconds <= Double(limitSeconds) else {
                throw ParseError(text: text, problem: .tooLong)
            }
            secondsSoFar += seconds
            // Whole numbers exactly ("36500d" is the limit, not a rounding past it).
            total += value.rounded(.towardZero) == value ? unit.size * Int64(value) : unit.size * value
        }
        return total
    }

    /// The shortest exact form: "2s", "250ms", "1m30s", "0s".
    public static func format(_ d: Duration) -> String {
        var us = d.microseconds
        if us == 0 { return "0s" }
        var out = us < 0 ? "-" : ""
        us = abs(us)
        if us % 1_000_000 != 0 {
            return us % 1000 == 0 ? "\(out)\(us / 1000)ms" : "\(out)\(us)us"
        }
        var s = us / 1_000_000
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60), ("s", 1)] where s >= size {
            out += "\(s / size)\(unit)"
            s %= size
        }
        return out
    }

    /// For people: "2m 13s", "45s", "1h 5m" (outage lengths in toasts and history).
    public static func human(_ d: Duration) -> String {
        let total = max(0, d.microseconds / 1_000_000)
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        if h > 0 { return m > 0 ? "\(h)h \(m)m" : "\(h)h" }
        if m > 0 { return s > 0 ? "\(m)m \(s)s" : "\(m)m" }
        return "\(s)s"
    }
}

/// A duration in a plugin's config, written as text ("5s").
public struct ConfigDuration: Codable, Sendable, Equatable, Comparable, CustomStringConvertible {
    public var duration: Duration

    public init(_ duration: Duration) { self.duration = duration }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            duration = try DurationText.parse(text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(DurationText.format(duration))
    }

    public var description: String { DurationText.format(duration) }
    public static func < (a: Self, b: Self) -> Bool { a.duration < b.duration }
    public static func seconds(_ s: Int) -> Self { Self(.seconds(s)) }
    public static func milliseconds(_ ms: Int) -> Self { Self(.milliseconds(ms)) }
}

extension StringProtocol {
    public func trimmingSpaces() -> SubSequence {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
