import ArgumentParser
import Glibc
import LifelineCore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the state at once and again on every change, until killed.",
        discussion: """
            Formats: plain, json (every field), i3bar (i3bar/swaybar protocol: header, then one \
            status line per change), waybar (one object per line for a custom module with \
            return-type json), or a template with status --format fields, e.g. '{icon} {state}'.
            Each line is written at once (no buffering). While no daemon runs it shows 'unknown'.
            """
    )

    @Option(help: "plain, json, i3bar, waybar, or a template such as '{icon} {state}'.")
    var format: String = "plain"

    func validate() throws {
        if WatchFormat(argument: format) == nil {
            throw ValidationError("--format must be \(WatchFormat.names.joined(separator: ", ")) or a template with {fields}, got '\(format)'")
        }
    }

    func run() throws {
        let format = WatchFormat(argument: format)!
        // A bar that goes away closes the pipe: finish quietly instead of dying on SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        for line in format.header { Self.emit(line) }
        var last: String?
        try Self.source(paths: .fromEnvironment()).run { event in
            let line = format.line(event, now: WallClock.micros())
            guard line != last else { return }
            last = line
            Self.emit(line)
        }
    }

    /// Where changes come from. Only the state file here; a D-Bus `StateChanged`
    /// source, when the daemon has one, is preferred (it needs no file system).
    static func source(paths: Paths) -> any WatchSource {
        StateFileSource(path: paths.stateFile)
    }

    /// One line, written straight to the file descriptor: a bar reading a pipe sees
    /// it at once (stdout through a pipe is otherwise block-buffered).
    static func emit(_ line: String) {
        do {
            try Files.writeAll(1, (line + "\n").utf8, path: "standard output")
        } catch {
            Glibc.exit(0)  // the reader is gone
        }
    }
}
