import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform

/// `watch [--format F | --format=F]` from the runtime state file. A bar runs
/// this all day: here it costs a small static binary with no C library, no
/// Foundation and no async runtime, and it sleeps until the state changes
/// (`StateFileWatch`), instead of the full CLI's D-Bus client.
enum FastWatch {
    /// Never returns when it answers; nil to let the full CLI answer (other
    /// options, `--help`, a bad format, which it explains, and no state file:
    /// a daemon that keeps its runtime folder elsewhere may still answer on D-Bus).
    static func run(_ options: ArraySlice<String>, paths: Paths = .fromEnvironment()) -> Int32? {
        var formatName: String?
        var rest = options
        while let option = rest.popFirst() {
            if option == "--format", formatName == nil, let value = rest.popFirst(), !value.hasPrefix("-") {
                formatName = value
            } else if option.hasPrefix("--format="), formatName == nil {
                formatName = String(option.dropFirst("--format=".count))
            } else {
                return nil
            }
        }
        guard let format = WatchFormat(argument: formatName ?? "plain"), Files.exists(paths.stateFile) else {
            return nil
        }
        // A bar that goes away closes the pipe: finish quietly instead of dying on SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        for line in format.header where !StandardOutput.writeLine(line) { return 0 }
        var last: String?
        do {
            try StateFileWatch(path: paths.stateFile).run(
                refreshAfterMs: { format.refreshAfterMs($0, now: WallClock.micros()) }
            ) { event in
                let line = format.line(event, now: WallClock.micros())
                guard line != last else { return true }
                last = line
                return StandardOutput.writeLine(line)
            }
            return 0  // the reader is gone
        } catch {
            var message = "lifeline watch: \(error)\n"
            message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            return 1
        }
    }
}
