/// A parsed TOML document as plain Swift values, so decoding and error reporting
/// never touch TOMLKit's C++ nodes.
public indirect enum ConfigValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case array([ConfigValue])
    case table(ConfigTable)
    /// Dates and times: valid TOML, but no Lifeline key takes one.
    case other(typeName: String)

    /// For messages: "a string", "an integer", …
    public var typeName: String {
        switch self {
        case .string: "a string"
        case .int: "an integer"
        case .double: "a float"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .other(let name): name
        }
    }
}

/// A TOML table; keys keep the order the parser gives them.
public struct ConfigTable: Sendable, Equatable {
    public var entries: [(key: String, value: ConfigValue)]

    public init(_ entries: [(key: String, value: ConfigValue)] = []) { self.entries = entries }

    public var keys: [String] { entries.map(\.key) }

    public subscript(key: String) -> ConfigValue? {
        get { entries.first { $0.key == key }?.value }
        set {
            if let i = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[i].value = newValue } else { entries.remove(at: i) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public static func == (a: ConfigTable, b: ConfigTable) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
