import ArgumentParser
import LifelineDaemon

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the monitors and sinks in the foreground (systemd runs this).",
        discussion: "Exits 0 on SIGTERM/SIGINT, 2 on a bad config, 3 if another daemon is running. SIGHUP reloads the config."
    )

    @Option(name: .long, help: "Config file (default: $XDG_CONFIG_HOME/lifeline/config.toml, else built-in defaults).")
    var config: String?

    func run() async throws {
        let logger = bootstrapLogging()
        let code = await Daemon.run(configPath: config, logger: logger)
        if code != .ok { throw ExitCode(code.rawValue) }
    }
}
