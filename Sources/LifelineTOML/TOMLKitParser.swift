import Glibc
import LifelineConfig
import LifelineCore
import TOMLKit

// TOMLKit in this process. TOMLKit brings Foundation (with its ICU data) and
// the C++ runtime, many megabytes of resident pages, so only short-lived programs
// link this module: `lifeline-cli` (which serves as the parsing child), the
// tests and the fuzzer. The daemon parses a config file through that child
// (`TOMLParser.isolated`) and never maps any of it.
extension TOMLParser {
    /// Parses in this process: only for input that cannot take the process down
    /// with it (tests, the parsing child).
    public static let inProcess = TOMLParser { text, file throws(ConfigError) in
        switch parseInProcess(text) {
        case .table(let table): return table
        case .syntaxError(let line, let message): throw ConfigError(file: file, line: line, key: nil, message: message)
        }
    }

    static func parseInProcess(_ text: String) -> ConfigWire.Outcome {
        do {
            return .table(ConfigTable(try TOMLTable(string: text)))
        } catch let error as TOMLParseError {
            return .syntaxError(line: error.source.begin.line > 0 ? error.source.begin.line : nil, message: error.description)
        } catch {
            return .syntaxError(line: nil, message: "\(error)")
        }
    }

    /// The child's side: reads TOML on standard input, writes the outcome in the
    /// `ConfigWire` format on standard output. Returns the exit status.
    public static func serveChild() -> Int32 {
        // A crash here is expected now and then and already reported by the parent:
        // no core file, no crash collector.
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = withUnsafePointer(to: &noCore) { setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), $0) }
        guard let input = ChildProcess.readAll(fd: 0, limit: IsolatedParse.inputLimit) else { return 1 }
        let text = String(decoding: input, as: UTF8.self)
        return ChildProcess.writeAll(fd: 1, ConfigWire.write(parseInProcess(text))) ? 0 : 1
    }
}

extension ConfigValue {
    init(_ node: any TOMLValueConvertible) {
        switch node.type {
        case .string: self = .string(node.string ?? "")
        case .int: self = .int(node.int ?? 0)
        case .double: self = .double(node.double ?? 0)
        case .bool: self = .bool(node.bool ?? false)
        case .array: self = .array(node.array.map { $0.map { ConfigValue($0) } } ?? [])
        case .table: self = .table(node.table.map(ConfigTable.init) ?? ConfigTable())
        case .date: self = .other(typeName: "a date")
        case .time: self = .other(typeName: "a time")
        case .dateTime: self = .other(typeName: "a date-time")
        }
    }
}

extension ConfigTable {
    init(_ table: TOMLTable) {
        self.init(table.keys.compactMap { key in table[key].map { (key, ConfigValue($0)) } })
    }
}

extension ConfigSection {
    /// Decodes one section from the keys of a TOML table (`"failures = 3"`), in
    /// this process and the way the loader does: defaults, unknown keys, choices,
    /// `validate()`. Errors name the key alone. For tests of a plugin's config.
    public static func decode(toml: String) throws(ConfigError) -> Self {
        let table = try TOMLParser.inProcess.parse(toml, file: "(toml)")
        let decoding = ConfigDecoding(file: "(toml)", locator: SourceLocator(text: toml))
        return try decoding.decode(Self.self, from: table, path: [], display: "")
    }
}
