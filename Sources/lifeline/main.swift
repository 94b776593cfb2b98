// `lifeline`: the command people and status bars run.
//
// A tmux `#()` or a bar may run `lifeline status` every second, and a bar runs
// `lifeline watch` all day, so those two commands are answered here, from the
// runtime state file, by a binary that links no C library and no Foundation and
// never starts the async runtime. `lifeline daemon` runs all day too: it is
// `lifeline-daemon`, the plugins without Foundation, TOMLKit or ArgumentParser.
// The full CLI (`lifeline-cli`: D-Bus, libcurl, libnotify, Foundation, dozens
// of shared libraries to load) does everything else. Either replaces
// this process with execv, so `lifeline daemon` keeps its pid for systemd.
import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform

InheritedSignals.resetChildSignal()
let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "status", let code = FastStatus.run(arguments.dropFirst(2)) {
    exit(code)
}
if arguments.count >= 2, arguments[1] == "watch", let code = FastWatch.run(arguments.dropFirst(2)) {
    exit(code)
}
if arguments.count >= 2, arguments[1] == "daemon" {
    SiblingProgram.exec("lifeline-daemon", arguments)
}
SiblingProgram.exec("lifeline-cli", arguments)

/// `status [--format F | --format=F] [--json]` when the state file answers it.
enum FastStatus {
    /// The exit code, or nil to let the full CLI answer (other options, `--help`,
    /// no state file: it then asks the daemon on D-Bus or says there is none).
    static func run(_ options: ArraySlice<String>) -> Int32? {
        var format: String?
        var json = false
        var rest = options
        while let option = rest.popFirst() {
            if option == "--json", !json {
                json = true
            } else if option == "--format", format == nil, let value = rest.popFirst(), !value.hasPrefix("-") {
                format = value
            } else if option.hasPrefix("--format="), format == nil {
                format = String(option.dropFirst("--format=".count))
            } else {
                return nil
            }
        }
        guard let current = CurrentState.read() else { return nil }
        print(StatusFormat.output(current.event, mutedUntil: current.mutedUntil, format: format, json: json))
        return current.event.state == .online ? 0 : 1
    }
}
