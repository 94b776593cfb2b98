/// Writes plain values as TOML, for `lifeline config show`: what it prints is
/// read back by the same loader, so it must round-trip every value exactly.
public enum TOMLText {
    /// `key = value` lines, one per entry, each ending in a newline.
    public static func lines(_ table: ConfigTable) -> String {
        table.entries.map { "\(key($0.key)) = \(value($0.value))\n" }.joined()
    }

    public static func value(_ value: ConfigValue) -> String {
        switch value {
        case .string(let s): return quote(s)
        case .int(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "nan" }
            if d.isInfinite { return d < 0 ? "-inf" : "inf" }
            let text = "\(d)"
            // TOML floats need a fraction or an exponent: 2.0, not 2.
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return "[" + items.map(Self.value).joined(separator: ", ") + "]"
        case .table(let t):
            return t.entries.isEmpty
                ? "{}" : "{ " + t.entries.map { "\(key($0.key)) = \(Self.value($0.value))" }.joined(separator: ", ") + " }"
        case .other(let name): return quote(name)
        }
    }

    public static func key(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy {
            ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" || $0 == "-"
        }
        return bare ? key : quote(key)
    }

    /// A TOML basic string: quotes, backslashes and control characters escaped.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
