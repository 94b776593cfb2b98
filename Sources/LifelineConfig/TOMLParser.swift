/// How TOML text becomes a `ConfigTable`.
///
/// The parser inside TOMLKit (toml++) stops the whole process with an assertion
/// on some malformed input: two characters, `[&`, were enough. A config file must
/// never be able to kill the daemon, so the daemon and the CLI parse in a child
/// process (`isolated`): the child is `lifeline-cli`, run with a hidden command
/// that parses and writes the plain value tree to a pipe (`ConfigWire`); if the
/// child dies, only the child is gone and the user reads an error that names the
/// file (and the line, when a shorter run finds it). This module holds no TOML
/// parser, so the daemon that links it maps neither TOMLKit nor the Foundation
/// TOMLKit needs; tests and the child itself use `inProcess` (LifelineTOML).
public struct TOMLParser: Sendable {
    private let body: @Sendable (String, String) throws(ConfigError) -> ConfigTable

    public init(_ body: @escaping @Sendable (_ text: String, _ file: String) throws(ConfigError) -> ConfigTable) {
        self.body = body
    }

    public func parse(_ text: String, file: String) throws(ConfigError) -> ConfigTable {
        try body(text, file)
    }

    /// Parses in a child process: `executable` run with `arguments`, which must
    /// lead to `TOMLParser.serveChild()`.
    public static func isolated(
        executable: String, arguments: [String], timeout: Duration = .seconds(5)
    ) -> TOMLParser {
        TOMLParser { text, file throws(ConfigError) in
            try IsolatedParse(executable: executable, arguments: arguments, timeout: timeout).parse(text, file: file)
        }
    }
}
