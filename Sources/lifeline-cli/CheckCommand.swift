import ArgumentParser
import LifelineCore
import LifelineFormats

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Ask the daemon to probe now and print the resulting state.",
        discussion: "Exits 0 when online, 1 when not, 3 when no daemon runs."
    )

    @OptionGroup var output: StateOutput

    @Option(help: "How long to wait for the daemon's answer.")
    var timeout: String = "30s"

    func run() throws {
        let wait: Duration
        do { wait = try DurationText.parse(timeout) } catch {
            printError("--timeout: \(error)")
            throw ExitCode.validationFailure
        }
        let event: StateEvent
        let mutedUntil: Int64
        do {
            let client = try DaemonClient.connect()
            _ = try client.call("Check", timeout: wait)
            (event, mutedUntil) = try client.statusAndMute()
        } catch .noDaemon(let why) {
            printError("no daemon running (\(why))")
            printError(howToStart)
            throw ExitCode(3)
        } catch {
            printError("check failed: \(error)")
            throw ExitCode(1)
        }
        print(output.render(event, mutedUntil: mutedUntil))
        throw ExitCode(event.state == .online ? 0 : 1)
    }
}
