import LifelineConfig

/// The configuration the daemon runs with when there is no file. A
/// user file that lists any `[[monitor]]` replaces these monitors, any `[[sink]]`
/// these sinks; other sections merge key by key. Only the lists of kinds are
/// stated here: every key's default is its section's (`ConfigSection.defaults`),
/// and `lifeline config show` prints them all.
public enum DefaultConfig {
    static let monitors = ["netlink", "probe", "networkmanager", "logind"]
    static let sinks = ["log", "dbus", "libnotify", "tmux", "exec", "tray"]

    /// The lists as TOML, as a person would write them.
    public static var toml: String {
        (monitors.map { ("monitor", $0) } + sinks.map { ("sink", $0) })
            .map { "[[\($0.0)]]\nkind = \(TOMLText.quote($0.1))\n" }
            .joined(separator: "\n")
    }

    /// The same, as the loader reads it. Built here rather than parsed, so the
    /// daemon never runs the TOML parser in its own process (it can abort, see
    /// `TOMLParser`); a test checks that it matches `toml`.
    public static var table: ConfigTable {
        func kinds(_ names: [String]) -> ConfigValue {
            .array(names.map { .table(ConfigTable([("kind", .string($0))])) })
        }
        return ConfigTable([("monitor", kinds(monitors)), ("sink", kinds(sinks))])
    }
}
