import LifelineConfig

/// The configuration the daemon runs with when there is no file. A
/// user file that lists any `[[monitor]]` replaces these monitors, any `[[sink]]`
/// these sinks; other sections merge key by key.
public enum DefaultConfig {
    public static let toml = """
        [debounce]
        down = "2s"
        up = "1s"

        [[monitor]]
        kind = "netlink"

        [[monitor]]
        kind = "probe"

        [[monitor]]
        kind = "networkmanager"

        [[monitor]]
        kind = "logind"

        [[sink]]
        kind = "log"

        [[sink]]
        kind = "dbus"

        [[sink]]
        kind = "libnotify"

        [[sink]]
        kind = "tmux"

        [[sink]]
        kind = "exec"

        [[sink]]
        kind = "tray"
        """

    /// The same, as the loader reads it. Built here rather than parsed, so the
    /// daemon never runs the TOML parser in its own process (it can abort, see
    /// `TOMLParser`); a test checks that it matches `toml`.
    public static var table: ConfigTable {
        func kinds(_ names: String...) -> ConfigValue {
            .array(names.map { .table(ConfigTable([("kind", .string($0))])) })
        }
        return ConfigTable([
            ("debounce", .table(ConfigTable([("down", .string("2s")), ("up", .string("1s"))]))),
            ("monitor", kinds("netlink", "probe", "networkmanager", "logind")),
            ("sink", kinds("log", "dbus", "libnotify", "tmux", "exec", "tray")),
        ])
    }
}
