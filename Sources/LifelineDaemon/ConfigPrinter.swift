import LifelineConfig
import LifelineCore
import LifelineProtocol
import TOMLKit

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
            out += "kind = \(JSONText.quote(plugin.kind))\n"
            let body = try TOMLEncoder().encode(plugin.config).convert()
            out += body.isEmpty || body.hasSuffix("\n") ? body : body + "\n"
        }
        return out
    }
}
