import LifelineConfig
import LifelineCore
import LifelinePlatform

/// Reads a config file, merges it over the embedded defaults and decodes every
/// section and plugin through the registry.
///
/// The TOML text is parsed by `parser`: by default in a child process, so that no
/// file can take the daemon or the CLI down (see `TOMLParser`); tests pass
/// `.inProcess`. Everything after the parse runs here, on plain values.
public enum ConfigLoader {
    /// How TOML is parsed in a child: `lifeline-cli config parse-toml` (hidden),
    /// which calls `TOMLParser.serveChild()`. Always `lifeline-cli`, found beside
    /// the running program: the daemon (`lifeline-daemon`) links no TOML parser.
    public static let parserArguments = ["config", "parse-toml"]
    public static let isolatedParser = TOMLParser.isolated(executable: SiblingProgram.path("lifeline-cli"), arguments: parserArguments)

    /// Loads `explicitPath`, or the user's config file if it exists, or the defaults.
    public static func load(
        explicitPath: String?, paths: Paths, parser: TOMLParser = isolatedParser
    ) throws(ConfigError) -> DaemonConfig {
        if let explicitPath { return try load(file: explicitPath, parser: parser) }
        if Files.exists(paths.configFile) { return try load(file: paths.configFile, parser: parser) }
        return try load(text: "", file: "(defaults)", parser: parser)
    }

    public static func load(file: String, parser: TOMLParser = isolatedParser) throws(ConfigError) -> DaemonConfig {
        let text: String
        do {
            text = try Files.readText(file, limit: 1 << 20)
        } catch {
            throw ConfigError(file: file, line: nil, key: nil, message: error.isNotFound ? "no such file" : "\(error)")
        }
        return try load(text: text, file: file, parser: parser)
    }

    public static func load(text: String, file: String, parser: TOMLParser = isolatedParser) throws(ConfigError) -> DaemonConfig {
        // Nothing to parse: no child process for the common case of no config file.
        let user = text.allSatisfy(\.isWhitespace) ? ConfigTable() : try parser.parse(text, file: file)
        return try load(table: user, text: text, file: file)
    }

    /// Decodes a parsed file; `text` is its source, for the lines in error messages.
    public static func load(table user: ConfigTable, text: String, file: String) throws(ConfigError) -> DaemonConfig {
        let decoding = ConfigDecoding(file: file, locator: SourceLocator(text: text))

        let known = ["debounce", "monitor", "sink"]
        if let unknown = user.keys.first(where: { !known.contains($0) }) {
            throw decoding.error(base: [], display: "", at: [], key: unknown, "unknown key (known: \(known.joined(separator: ", ")))")
        }
        let merged = merge(user, over: DefaultConfig.table)

        var debounce = DebounceSection()
        if let value = merged["debounce"] {
            guard case .table(let table) = value else {
                throw decoding.error(base: [], display: "", at: [], key: "debounce", "must be a table ([debounce])")
            }
            debounce = try decoding.decode(DebounceSection.self, from: table, path: ["debounce"], display: "debounce")
        }
        let monitors = try plugins(.monitor, in: merged, decoding: decoding)
        let sinks = try plugins(.sink, in: merged, decoding: decoding)
        return DaemonConfig(source: file, debounce: debounce.settings, monitors: monitors, sinks: sinks)
    }

    /// `[[monitor]]` and `[[sink]]` lists replace the defaults whole; tables merge key by key.
    static func merge(_ user: ConfigTable, over defaults: ConfigTable) -> ConfigTable {
        var result = defaults
        for (key, value) in user.entries {
            if case .table(let u) = value, case .table(let d)? = result[key], key != "monitor", key != "sink" {
                result[key] = .table(merge(u, over: d))
            } else {
                result[key] = value
            }
        }
        return result
    }

    private static func plugins(
        _ role: ConfiguredPlugin.Role, in root: ConfigTable, decoding: ConfigDecoding
    ) throws(ConfigError) -> [ConfiguredPlugin] {
        let section = role.rawValue
        guard let value = root[section] else { return [] }
        guard case .array(let items) = value else {
            throw decoding.error(base: [], display: "", at: [], key: section, "must be an array of tables: write [[\(section)]]")
        }
        var result: [ConfiguredPlugin] = []
        for (index, item) in items.enumerated() {
            let path = [section, String(index)]
            let display = "\(section) #\(index + 1)"
            guard case .table(let table) = item else {
                throw decoding.error(base: path, display: display, at: [], key: nil, "must be a table: write [[\(section)]]")
            }
            guard case .string(let kind)? = table["kind"] else {
                let problem = table["kind"] == nil ? "missing (required)" : "must be a string"
                throw decoding.error(base: path, display: display, at: [], key: "kind", problem)
            }
            let shown = "\(display) (\(kind))"
            switch role {
            case .monitor:
                guard let type = Registry.monitor(kind: kind) else {
                    throw unknownKind(kind, role: role, known: Registry.monitors.map { $0.kind }, decoding: decoding, path: path, display: display)
                }
                result.append(try configure(type, table: table, index: index, decoding: decoding, path: path, display: shown))
            case .sink:
                guard let type = Registry.sink(kind: kind) else {
                    throw unknownKind(kind, role: role, known: Registry.sinks.map { $0.kind }, decoding: decoding, path: path, display: display)
                }
                result.append(try configure(type, table: table, index: index, decoding: decoding, path: path, display: shown))
            }
        }
        return result
    }

    private static func unknownKind(
        _ kind: String, role: ConfiguredPlugin.Role, known: [String], decoding: ConfigDecoding, path: [String], display: String
    ) -> ConfigError {
        decoding.error(base: path, display: display, at: [], key: "kind",
                       "unknown \(role.rawValue) '\(kind)' (known: \(known.sorted().joined(separator: ", ")))")
    }

    private static func configure<M: Monitor>(
        _ type: M.Type, table: ConfigTable, index: Int, decoding: ConfigDecoding, path: [String], display: String
    ) throws(ConfigError) -> ConfiguredPlugin {
        let config = try decoding.decode(M.Config.self, from: table, path: path, display: display, ignoring: ["kind"])
        return .monitor(type, config: config, index: index)
    }

    private static func configure<S: Sink>(
        _ type: S.Type, table: ConfigTable, index: Int, decoding: ConfigDecoding, path: [String], display: String
    ) throws(ConfigError) -> ConfiguredPlugin {
        let config = try decoding.decode(S.Config.self, from: table, path: path, display: display, ignoring: ["kind"])
        return .sink(type, config: config, index: index)
    }
}
