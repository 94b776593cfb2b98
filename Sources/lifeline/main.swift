// `lifeline`: the command people and status bars run.
//
// A tmux `#()` or a bar may run `lifeline status` every second, and a bar runs
// `lifeline watch` all day, so those two commands are answered here, from the
// runtime state file, by a binary that links no C library and no Foundation and
// never starts the async runtime. The full
// CLI (`lifeline-cli`: the daemon, D-Bus, libcurl, libnotify… 55 shared
// libraries, ≈ 10 ms just to load) does everything else; it replaces this
// process with execv, so `lifeline daemon` keeps its pid for systemd.
import Glibc
import LifelineCore
import LifelineProtocol

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "status", let code = FastStatus.run(arguments.dropFirst(2)) {
    exit(code)
}
if arguments.count >= 2, arguments[1] == "watch", let code = FastWatch.run(arguments.dropFirst(2)) {
    exit(code)
}
FullCLI.exec(arguments)

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

enum FullCLI {
    /// Runs `lifeline-cli` with the same arguments, in this process. It lives
    /// beside this binary (the build folder, /usr/bin) or in ../libexec/lifeline/.
    static func exec(_ arguments: [String]) -> Never {
        let directory = Files.directory(of: executablePath())
        let candidates = [directory + "/lifeline-cli", directory + "/../libexec/lifeline/lifeline-cli"]
        let target = candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(target, &argv)
        let reason = String(cString: strerror(errno))
        var message = "lifeline: cannot run \(target): \(reason)\n"
        message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        exit(1)
    }

    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
