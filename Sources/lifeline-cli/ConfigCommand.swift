import ArgumentParser
import LifelineConfig
import LifelineCore
import LifelineDaemon
import LifelinePlatform
import LifelineTOML

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Validate or print the configuration.",
        subcommands: [Check.self, Show.self, ParseTOML.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a config file (default: the user's). Exits 0 when valid, 2 when not.")

        @Argument(help: "The file to check.")
        var file: String?

        func run() throws {
            let paths = Paths.fromEnvironment()
            do {
                let config = try ConfigLoader.load(explicitPath: file, paths: paths)
                print("\(config.source): ok (\(config.monitors.count) monitors, \(config.sinks.count) sinks)")
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the effective configuration, defaults included.")

        @Option(name: .long, help: "Config file (default: the user's, else built-in defaults).")
        var config: String?

        func run() throws {
            do {
                let effective = try ConfigLoader.load(explicitPath: config, paths: .fromEnvironment())
                print(try ConfigPrinter.toml(effective), terminator: "")
            } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        }
    }

    /// The child that parses TOML for the daemon and the CLI, so that a file that
    /// crashes the parser crashes only this child (see `TOMLParser`). Not for people.
    struct ParseTOML: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: ConfigLoader.parserArguments[1],
            abstract: "Parse TOML from standard input for the daemon (internal).",
            shouldDisplay: false)

        func run() throws {
            let code = TOMLParser.serveChild()
            if code != 0 { throw ExitCode(code) }
        }
    }
}
