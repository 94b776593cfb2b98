import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelinePlatform
import Logging

/// The full CLI. Users run `lifeline`, a small front binary that answers
/// `status` from the state file itself and hands everything else to this one
/// (Sources/lifeline/main.swift).
@main
struct Lifeline: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "lifeline",
        abstract: "Tells you once, at the right place, when your connection is gone and when it is back.",
        version: version,
        subcommands: [DaemonCommand.self, StatusCommand.self, CheckCommand.self, WatchCommand.self, ConfigCommand.self, HistoryCommand.self,
                      WaitOnlineCommand.self, RunCommand.self,
                      DiagnoseCommand.self]
    )

    static func main() async {
        // Before anything is spawned (the config parser, `run`'s command).
        InheritedSignals.resetChildSignal()
        await main(nil)
    }
}

/// Logs go to standard error, as the daemon's do (`LIFELINE_LOG_LEVEL` picks the level).
func bootstrapLogging() -> Logger { DaemonLogging.bootstrap() }

/// Prints to standard error without Foundation.
func printError(_ message: String) {
    var line = "lifeline: " + message + "\n"
    line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
