/// A configuration error that names where it is: file, line and key
/// (mako style: "config.toml:12: sink #2 'format': expected a string").
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    /// The key's path as a user reads it: "debounce.down", "sink #2 (tmux).format".
    public var key: String?
    public var message: String

    public init(file: String, line: Int?, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var out = file
        if let line { out += ":\(line)" }
        out += ": "
        if let key { out += "'\(key)': " }
        return out + message
    }
}
