import ArgumentParser
import LifelineCore
import LifelinePlatform

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the monitors and sinks in the foreground (systemd runs this).",
        discussion: "Exits 0 on SIGTERM/SIGINT, 2 on a bad config, 3 if another daemon is running. SIGHUP reloads the config."
    )

    @Option(name: .long, help: "Config file (default: $XDG_CONFIG_HOME/lifeline/config.toml, else built-in defaults).")
    var config: String?

    /// `lifeline daemon` runs `lifeline-daemon`, which leaves help and option
    /// errors to this command. Run as `lifeline-cli daemon`, it still hands over
    /// to that smaller program: the daemon runs all day.
    func run() async throws {
        // `--config=FILE`, which that program always takes itself: it never hands back.
        SiblingProgram.exec("lifeline-daemon", ["lifeline", "daemon"] + (config.map { ["--config=" + $0] } ?? []))
    }
}
