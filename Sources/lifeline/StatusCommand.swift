import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the current state once.",
        discussion: """
            Asks the daemon on the session bus (GetStatus), else reads the runtime state file.
            Exits 0 when online, 1 when not, 3 when no daemon runs.
            --format fields: {state} {icon} {interface} {kind} {rtt_ms} {since} {duration} {reason}
            """
    )

    @OptionGroup var output: StateOutput

    func run() throws {
        let event: StateEvent
        if let client = try? DaemonClient.connect(), let live = try? client.status() {
            event = live
        } else if let current = CurrentState.read() {
            event = current.event
        } else {
            printError("no daemon running (not on the session bus, no state at \(Paths.fromEnvironment().stateFile))")
            throw ExitCode(3)
        }
        print(output.render(event))
        throw ExitCode(event.state == .online ? 0 : 1)
    }

    /// The default line for a person: "online via wlan0 (wifi) for 2m 13s: probe answered in 23 ms".
    static func plain(_ e: StateEvent) -> String {
        var t = "{state}"
        if !e.interface.isEmpty { t += " via {interface}" + (e.kind == .none ? "" : " ({kind})") }
        t += " for {duration}"
        if !e.reason.isEmpty { t += ": {reason}" }
        return t
    }
}

/// `--format` / `--json`, shared by `status` and `check`.
struct StateOutput: ParsableArguments {
    @Option(help: "Template, e.g. '{icon} {state} {interface}'.")
    var format: String?

    @Flag(help: "Print every field as one JSON object.")
    var json = false

    func render(_ event: StateEvent) -> String {
        if json { return JSONText.object(event) }
        return StatusFormat.render(format ?? StatusCommand.plain(event), event, now: WallClock.micros())
    }
}
