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

        [[sink]]
        kind = "log"

        [[sink]]
        kind = "dbus"

        [[sink]]
        kind = "libnotify"

        [[sink]]
        kind = "tmux"
        """
}
