import Glibc
import LifelineCore

/// The user's command, started with `posix_spawnp` (argv as given, looked up in
/// PATH, no shell) on the user's own standard input, output and error, in
/// `lifeline`'s process group: it stays in the terminal's foreground, so it can
/// read the terminal and Ctrl-C reaches it as it would without `lifeline`.
struct ChildCommand {
    let pid: pid_t

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func start(_ argv: [String]) throws(Failure) -> ChildCommand {
        // Whatever this process blocks or ignores is not the command's business.
        var attributes = CleanSpawn.attributes()
        defer { posix_spawnattr_destroy(&attributes) }
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArguments { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], nil, &attributes, cArguments, environ)
        guard rc == 0 else {
            throw Failure(description: "cannot run \(argv[0]): \(String(cString: strerror(rc)))")
        }
        return ChildCommand(pid: pid)
    }

    /// The exit status once it has ended (128 + N when killed by signal N, as a
    /// shell reports it); nil while it runs.
    func exitStatus() -> Int32? {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == 0 { return nil }
            if r < 0 {
                if errno == EINTR { continue }
                return 1
            }
            break
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    func send(_ signal: Int32) { _ = kill(pid, signal) }
}
