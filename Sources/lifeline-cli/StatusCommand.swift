import ArgumentParser
import Glibc
import LifelineCore
import LifelineDaemon
import LifelineFormats
import LifelinePlatform

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the current state once.",
        discussion: """
            Reads the runtime state file the daemon keeps current, else asks it on the session bus (GetStatus).
            Exits 0 when online, 1 when not, 3 when no daemon runs.
            --format fields: {state} {icon} {interface} {kind} {rtt_ms} {since} {duration} {reason}
            """
    )

    @OptionGroup var output: StateOutput

    func run() throws {
        let code = Self.report(format: output.format, json: output.json)
        if code != 0 { throw ExitCode(code) }
    }

    /// Prints the state the way `status` does and returns its exit code: 0 online,
    /// 1 not online, 3 no daemon.
    static func report(format: String?, json: Bool) -> Int32 {
        // The state file first: the daemon replaces it on every change with the same
        // event D-Bus carries, and reading it is a fraction of a bus connection plus
        // a round trip to the daemon, which waits for a core when the machine is busy.
        // D-Bus covers a daemon whose runtime
        // folder this process does not see.
        let event: StateEvent
        let mutedUntil: Int64
        if let current = CurrentState.read() {
            (event, mutedUntil) = (current.event, current.mutedUntil)
        } else if let client = try? DaemonClient.connect(), let live = try? client.statusAndMute() {
            (event, mutedUntil) = live
        } else {
            printError("no daemon running (not on the session bus, no state at \(Paths.fromEnvironment().stateFile))")
            printError(howToStart)
            return 3
        }
        print(StateOutput.render(event, mutedUntil: mutedUntil, format: format, json: json))
        return event.state == .online ? 0 : 1
    }
}

/// What to do about "no daemon running": most who see it never started one.
let howToStart = "start it with `systemctl --user enable --now lifeline` (or run `lifeline daemon`)"

/// `--format` / `--json`, shared by `status` and `check`.
struct StateOutput: ParsableArguments {
    @Option(help: "Template, e.g. '{icon} {state} {interface}'.")
    var format: String?

    @Flag(help: "Print every field as one JSON object.")
    var json = false

    func render(_ event: StateEvent, mutedUntil: Int64 = 0) -> String {
        Self.render(event, mutedUntil: mutedUntil, format: format, json: json)
    }

    static func render(_ event: StateEvent, mutedUntil: Int64 = 0, format: String?, json: Bool) -> String {
        StatusFormat.output(event, mutedUntil: mutedUntil, format: format, json: json)
    }
}
