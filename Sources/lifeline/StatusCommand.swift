import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the current state once.",
        discussion: """
            Exits 0 when online, 1 when not, 3 when no daemon runs.
            --format fields: {state} {icon} {interface} {kind} {rtt_ms} {since} {duration} {reason}
            """
    )

    @Option(help: "Template, e.g. '{icon} {state} {interface}'.")
    var format: String?

    @Flag(help: "Print every field as one JSON object.")
    var json = false

    func run() throws {
        guard let current = CurrentState.read() else {
            printError("no daemon running (no state at \(Paths.fromEnvironment().stateFile))")
            throw ExitCode(3)
        }
        let event = current.event
        let text: String
        if json {
            text = JSONText.object(event)
        } else if let format {
            text = StatusFormat.render(format, event, now: WallClock.micros())
        } else {
            text = StatusFormat.render(Self.plain(event), event, now: WallClock.micros())
        }
        print(text)
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
