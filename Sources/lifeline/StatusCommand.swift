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
        let code = Self.report(format: format, json: json)
        if code != 0 { throw ExitCode(code) }
    }

    /// Prints the state the way `status` does and returns its exit code: 0 online,
    /// 1 not online, 3 no daemon.
    static func report(format: String?, json: Bool) -> Int32 {
        guard let current = CurrentState.read() else {
            printError("no daemon running (no state at \(Paths.fromEnvironment().stateFile))")
            return 3
        }
        let event = current.event
        let now = WallClock.micros()
        let text: String
        if json {
            text = JSONText.object(event)
        } else if let format {
            text = StatusFormat.render(format, event, now: now)
        } else {
            text = StatusFormat.render(StatusFormat.plainTemplate(for: event), event, now: now)
        }
        print(text)
        return event.state == .online ? 0 : 1
    }

    /// `status [--format F | --format=F] [--json]` parsed by hand, for the process
    /// that a tmux `#()` or a bar starts every second. ArgumentParser discovers
    /// options by reflection, and in the statically linked binary every first
    /// protocol-conformance lookup scans the records of all linked modules
    /// (Foundation, ICU, TOMLKit…): that, plus starting the async runtime's thread
    /// pool, was most of the command's time. Anything else (`--help`, a typo)
    /// returns nil and goes through ArgumentParser, which owns the messages.
    static func fastPath(_ arguments: ArraySlice<String>) -> Int32? {
        var format: String?
        var json = false
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument == "--json", !json {
                json = true
            } else if argument == "--format", format == nil, let value = rest.popFirst(), !value.hasPrefix("-") {
                format = value
            } else if argument.hasPrefix("--format="), format == nil {
                format = String(argument.dropFirst("--format=".count))
            } else {
                return nil
            }
        }
        return report(format: format, json: json)
    }
}
