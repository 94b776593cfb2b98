import LifelineConfig
import LifelineCore
import LifelineFormats

/// `lifeline config show`: the effective configuration, defaults filled in, as
/// TOML that `lifeline config check` accepts again.
public enum ConfigPrinter {
    public static func toml(_ config: DaemonConfig) throws -> String {
        var out = "# effective configuration from \(config.source)\n\n"
        out += "[debounce]\n"
        out += "down = \"\(DurationText.format(config.debounce.down))\"\n"
        out += "up = \"\(DurationText.format(config.debounce.up))\"\n"
        for plugin in config.monitors + config.sinks {
            out += "\n[[\(plugin.role.rawValue)]]\n"
            out += "kind = \(TOMLText.quote(plugin.kind))\n"
            guard case .table(let keys) = try ConfigEncoder.encode(plugin.config) else { continue }
            out += TOMLText.lines(keys)
        }
        return out
    }
}
