import Glibc

/// The XDG base directories (every one honours its environment variable, so
/// tests point them at temporary folders) and Lifeline's files within them.
public struct Paths: Sendable, Equatable {
    public var configHome: String
    public var stateHome: String
    public var runtimeDir: String

    public init(configHome: String, stateHome: String, runtimeDir: String) {
        self.configHome = configHome
        self.stateHome = stateHome
        self.runtimeDir = runtimeDir
    }

    /// From the environment: `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `XDG_RUNTIME_DIR`,
    /// falling back to the XDG defaults under `$HOME`, and to `lifeline-$UID` in
    /// `$TMPDIR` (else `/tmp`) for a runtime dir when none is set (no systemd
    /// login session), as ssh-agent and PulseAudio fall back.
    public static func fromEnvironment(_ env: [String: String]) -> Paths {
        from { env[$0] }
    }

    /// From the process environment, reading only the variables it needs (no
    /// dictionary of the whole environment: `lifeline status` runs every second).
    public static func fromEnvironment() -> Paths {
        from(Environment.value)
    }

    private static func from(_ env: (String) -> String?) -> Paths {
        let home = env("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        func dir(_ key: String, _ fallback: String) -> String {
            if let v = env(key), v.hasPrefix("/") { return v }
            return fallback
        }
        return Paths(
            configHome: dir("XDG_CONFIG_HOME", home + "/.config"),
            stateHome: dir("XDG_STATE_HOME", home + "/.local/state"),
            runtimeDir: dir("XDG_RUNTIME_DIR", withoutTrailingSlash(dir("TMPDIR", "/tmp")) + "/lifeline-\(getuid())")
        )
    }

    private static func withoutTrailingSlash(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    public var configFile: String { configHome + "/lifeline/config.toml" }
    public var hooksDir: String { configHome + "/lifeline/hooks.d" }
    public var defaultLogFile: String { stateHome + "/lifeline/events.jsonl" }
    public var stateFile: String { runtimeDir + "/lifeline/state.json" }
}

public enum Environment {
    /// One variable of the process environment.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The process environment as a dictionary.
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") {
                result[String(s[..<eq])] = String(s[s.index(after: eq)...])
            }
            p += 1
        }
        return result
    }
}
