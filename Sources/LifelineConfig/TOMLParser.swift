import Glibc
import TOMLKit

/// How TOML text becomes a `ConfigTable`.
///
/// The parser inside TOMLKit (toml++) stops the whole process with an assertion
/// on some malformed input: two characters, `[&`, were enough. A config file must
/// never be able to kill the daemon, so the daemon and the CLI parse in a child
/// process (`isolated`): the child is this same program, run with a hidden
/// command that parses and writes the plain value tree to a pipe (`ConfigWire`);
/// if the child dies, only the child is gone and the user reads an error that
/// names the file (and the line, when a shorter run finds it).
/// Tests and the child itself use `inProcess`.
public struct TOMLParser: Sendable {
    private let body: @Sendable (String, String) throws(ConfigError) -> ConfigTable

    public init(_ body: @escaping @Sendable (_ text: String, _ file: String) throws(ConfigError) -> ConfigTable) {
        self.body = body
    }

    public func parse(_ text: String, file: String) throws(ConfigError) -> ConfigTable {
        try body(text, file)
    }

    /// TOMLKit in this process: only for input that cannot take the process down
    /// with it (tests, the parsing child).
    public static let inProcess = TOMLParser { text, file throws(ConfigError) in
        switch parseInProcess(text) {
        case .table(let table): return table
        case .syntaxError(let line, let message): throw ConfigError(file: file, line: line, key: nil, message: message)
        }
    }

    /// Parses in a child process: `executable` (this program) run with `arguments`,
    /// which must lead to `TOMLParser.serveChild()`.
    public static func isolated(
        executable: String = "/proc/self/exe", arguments: [String], timeout: Duration = .seconds(5)
    ) -> TOMLParser {
        TOMLParser { text, file throws(ConfigError) in
            try IsolatedParse(executable: executable, arguments: arguments, timeout: timeout).parse(text, file: file)
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
