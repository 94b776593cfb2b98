import LifelineCore

/// Decodes a `Decodable` config (a plugin's `Config`, `[debounce]`) from a TOML
/// table, turning every problem into a `ConfigError` that names file, line and
/// key, and rejecting keys the type never asked for.
///
/// A `ConfigSection` is decoded by overlay: its `defaults` are encoded to a table,
/// the keys the file sets replace those entries, and the type's own (compiler
/// written) `init(from:)` reads the result. So a section lists its keys and
/// defaults once, as properties, and a key it lacks is still an error.
public struct ConfigDecoding: Sendable {
    public var file: String
    public var locator: SourceLocator

    public init(file: String, locator: SourceLocator) {
        self.file = file
        self.locator = locator
    }

    /// - Parameters:
    ///   - path: where `table` sits, as the locator knows it (`["sink", "1"]`).
    ///   - display: how to name that place to a person (`"sink #2 (tmux)"`).
    ///   - ignoring: keys handled by the caller (`kind`).
    public func decode<T: Decodable>(
        _ type: T.Type, from table: ConfigTable, path: [String], display: String, ignoring: Set<String> = []
    ) throws(ConfigError) -> T {
        let log = AccessLog()
        let root = Node(value: .table(table), codingPath: [], decoding: self, base: path, display: display, log: log)
        let value: T
        do {
            value = try root.make(T.self)
        } catch let error as ConfigError {
            throw error
        } catch let error as ConfigValueError {
            throw self.error(base: path, display: display, at: [], key: error.key, error.message)
        } catch let error as DecodingError {
            throw self.error(from: error, base: path, display: display)
        } catch {
            throw ConfigError(file: file, line: locator.line(of: path), key: display, message: "\(error)")
        }
        try log.checkUnknownKeys(ignoring: ignoring) { tablePath, key, known in
            let knownList = known.sorted().joined(separator: ", ")
            return self.error(
                base: path, display: display, at: tablePath, key: key,
                "unknown key" + (knownList.isEmpty ? "" : " (known: \(knownList))"))
        }
        return value
    }

    /// The keys `type` reads at its top level, as the loader decodes it (optional
    /// ones included), so that documentation can be checked against the code.
    public static func keys<T: Decodable>(of type: T.Type) -> Set<String> {
        let log = AccessLog()
        let decoding = ConfigDecoding(file: "", locator: SourceLocator(text: ""))
        let root = Node(value: .table(ConfigTable()), codingPath: [], decoding: decoding, base: [], display: "", log: log)
        // A section that refuses its defaults (exec: no command) has read every key by then.
        _ = try? root.make(T.self)
        return log.keys(askedAt: [])
    }

    public func error(base: [String], display: String, at codingPath: [String], key: String?, _ message: String) -> ConfigError {
        let full = codingPath + (key.map { [$0] } ?? [])
        let shown = ([display].filter { !$0.isEmpty } + full).joined(separator: ".")
        return ConfigError(file: file, line: locator.line(of: base + full), key: shown.isEmpty ? nil : shown, message: message)
    }

    private func error(from error: DecodingError, base: [String], display: String) -> ConfigError {
        func keys(_ path: [any CodingKey]) -> [String] { path.map { $0.intValue.map(String.init) ?? $0.stringValue } }
        switch error {
        case .keyNotFound(let key, let ctx):
            return self.error(base: base, display: display, at: keys(ctx.codingPath), key: key.stringValue, "missing (required)")
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx), .dataCorrupted(let ctx):
            return self.error(base: base, display: display, at: keys(ctx.codingPath), key: nil, ctx.debugDescription)
        @unknown default:
            return ConfigError(file: file, line: locator.line(of: base), key: display, message: "\(error)")
        }
    }
}

/// Which keys of which tables the `Decodable` asked for; lives for one decode call.
final class AccessLog {
    private var tables: [(path: [String], table: ConfigTable)] = []
    private var asked: [String: Set<String>] = [:]

    func saw(_ table: ConfigTable, at path: [String]) {
        let id = path.joined(separator: "\u{1F}")
        if asked[id] == nil {
            asked[id] = []
            tables.append((path, table))
        }
    }

    func keys(askedAt path: [String]) -> Set<String> {
        asked[path.joined(separator: "\u{1F}")] ?? []
    }

    func asked(_ key: String, at path: [String]) {
        asked[path.joined(separator: "\u{1F}"), default: []].insert(key)
    }

    func checkUnknownKeys(
        ignoring: Set<String>, _ makeError: ([String], String, Set<String>) -> ConfigError
    ) throws(ConfigError) {
        for (path, table) in tables {
            let known = asked[path.joined(separator: "\u{1F}")] ?? []
            let allowed = path.isEmpty ? known.union(ignoring) : known
            if let unknown = table.keys.first(where: { !allowed.contains($0) }) {
                throw makeError(path, unknown, known)
            }
        }
    }
}

private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ s: String) { stringValue = s }
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// One value being decoded; doubles as `Decoder` and single-value container.
private struct Node: Decoder, SingleValueDecodingContainer {
    let value: ConfigValue
    let codingPath: [any CodingKey]
    let decoding: ConfigDecoding
    let base: [String]
    let display: String
    let log: AccessLog
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var pathStrings: [String] { codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } }

    func child(_ value: ConfigValue, key: any CodingKey) -> Node {
        Node(value: value, codingPath: codingPath + [key], decoding: decoding, base: base, display: display, log: log)
    }

    func mismatch(_ expected: String) -> ConfigError {
        decoding.error(base: base, display: display, at: pathStrings, key: nil,
                       "expected \(expected), found \(value.typeName)")
    }

    func container<K: CodingKey>(keyedBy type: K.Type) throws -> KeyedDecodingContainer<K> {
        guard case .table(let table) = value else { throw mismatch("a table") }
        log.saw(table, at: pathStrings)
        return KeyedDecodingContainer(Keyed<K>(node: self, table: table))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch("an array") }
        return Unkeyed(node: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { false }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch("a boolean (true or false)") }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let s) = value else { throw mismatch("a string") }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .double(let d) where d.isFinite: return d
        case .double: throw decoding.error(base: base, display: display, at: pathStrings, key: nil, "expected a finite number, found nan or inf")
        case .int(let i): return Double(i)
        default: throw mismatch("a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard case .int(let i) = value else { throw mismatch("an integer") }
        guard let v = I(exactly: i) else {
            throw decoding.error(base: base, display: display, at: pathStrings, key: nil, "\(i) is out of range")
        }
        return v
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try make(type)
        } catch let error as ConfigValueError {
            throw decoding.error(base: base, display: display, at: pathStrings, key: error.key.isEmpty ? nil : error.key, error.message)
        } catch let error as DecodingError {
            // A type's own complaint ("'5 parsecs' is not a duration") at this key.
            if case .dataCorrupted(let ctx) = error {
                throw decoding.error(base: base, display: display, at: pathStrings, key: nil, ctx.debugDescription)
            }
            throw error
        }
    }
}

extension Node {
    /// Decodes `T` at this node, the way the config wants it: sections by overlay
    /// onto their defaults, choices against their list of words.
    func make<T: Decodable>(_ type: T.Type) throws -> T {
        if let section = T.self as? any ConfigSection.Type { return try overlay(section) as! T }
        if let choice = T.self as? any ConfigChoice.Type { return try pick(choice) as! T }
        return try T(from: self)
    }

    private func overlay<S: ConfigSection>(_ type: S.Type) throws -> S {
        guard case .table(let set) = value else { throw mismatch("a table") }
        var merged: ConfigTable
        do {
            guard case .table(let defaults) = try ConfigEncoder.encode(S.defaults) else {
                throw ConfigEncoder.Failure(description: "the defaults of \(S.self) do not encode as a table")
            }
            merged = defaults
        } catch {
            throw decoding.error(base: base, display: display, at: pathStrings, key: nil, "cannot read the defaults: \(error)")
        }
        for (key, setting) in set.entries { merged[key] = setting }
        let section = try S(from: Node(value: .table(merged), codingPath: codingPath, decoding: decoding,
                                       base: base, display: display, log: log))
        do {
            try section.validate()
        } catch {
            throw decoding.error(base: base, display: display, at: pathStrings, key: error.key.isEmpty ? nil : error.key, error.message)
        }
        return section
    }

    private func pick<C: ConfigChoice>(_ type: C.Type) throws -> C {
        let word = try decode(String.self)
        guard let choice = C(rawValue: word) else {
            throw decoding.error(base: base, display: display, at: pathStrings, key: nil, "must be \(C.choices), got '\(word)'")
        }
        return choice
    }
}

private struct Keyed<K: CodingKey>: KeyedDecodingContainerProtocol {
    let node: Node
    let table: ConfigTable
    var codingPath: [any CodingKey] { node.codingPath }
    var allKeys: [K] { table.keys.compactMap { K(stringValue: $0) } }

    func contains(_ key: K) -> Bool {
        node.log.asked(key.stringValue, at: node.pathStrings)
        return table[key.stringValue] != nil
    }

    func child(_ key: K) throws -> Node {
        node.log.asked(key.stringValue, at: node.pathStrings)
        guard let v = table[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return node.child(v, key: key)
    }

    func decodeNil(forKey key: K) throws -> Bool { !contains(key) }
    func decode(_ type: Bool.Type, forKey key: K) throws -> Bool { try child(key).decode(type) }
    func decode(_ type: String.Type, forKey key: K) throws -> String { try child(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: K) throws -> Double { try child(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: K) throws -> Float { try child(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: K) throws -> Int { try child(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: K) throws -> Int8 { try child(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: K) throws -> Int16 { try child(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: K) throws -> Int32 { try child(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: K) throws -> Int64 { try child(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: K) throws -> UInt { try child(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: K) throws -> UInt8 { try child(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: K) throws -> UInt16 { try child(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: K) throws -> UInt32 { try child(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: K) throws -> UInt64 { try child(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: K) throws -> T { try child(key).decode(type) }

    func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: K) throws -> KeyedDecodingContainer<N> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { node }
    func superDecoder(forKey key: K) throws -> any Decoder { try child(key) }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let node: Node
    let items: [ConfigValue]
    var currentIndex = 0
    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func next() throws -> Node {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "array too short"))
        }
        defer { currentIndex += 1 }
        return node.child(items[currentIndex], key: Key(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next().decode(type) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(type) }

    mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}
