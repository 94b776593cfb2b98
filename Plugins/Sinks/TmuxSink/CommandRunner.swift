import Glibc
import LifelineCore
import LifelinePlatform

/// Runs one short program (tmux) as argv, never through a shell, with a time
/// limit: a stopped tmux server must not hold the sink forever.
///
/// Started with `Spawn` (no copy of the daemon's page tables, no signal
/// blocked or ignored, no descriptor of the daemon but the three it is given)
/// and without `TMUX` and `TMUX_PANE`: inside a tmux pane they would point tmux
/// at that server's current client, and every call here names its target. The
/// run is awaited on the executor (`Child.collect`): no thread waits for it.
/// Standard output is kept up to `outputLimit` bytes, the start of standard
/// error for the message; past its time limit or the output limit, or when the
/// caller is cancelled, the child is killed with SIGKILL. It is always reaped.
struct CommandRunner: Sendable {
    enum Outcome: Equatable, Sendable {
        case ok(output: String)
        case failed(String)
        case notFound
        case timedOut
    }

    static let outputLimit = 64 * 1024

    var timeout: Duration = .seconds(2)

    func run(_ program: String, _ arguments: [String]) async -> Outcome {
        let deadline = ContinuousClock.now + timeout
        guard let output = Self.socketPair() else { return .failed("socketpair: \(String(cString: strerror(errno)))") }
        guard let errors = Self.socketPair() else {
            let why = String(cString: strerror(errno))
            close(output.parent); close(output.child)
            return .failed("socketpair: \(why)")
        }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        // Searches PATH for a bare name, as a shell would.
        var spawn = Spawn(.searched(program), arguments: [program] + arguments, environment: Self.environment())
        (spawn.standardInput, spawn.standardOutput, spawn.standardError) = (null, output.child, errors.child)
        let started = Result { () throws(Spawn.Failure) -> Child in try spawn.start() }
        for fd in [null, output.child, errors.child] where fd >= 0 { close(fd) }
        let child: Child
        switch started {
        case .success(let started): child = started
        case .failure(let failure):
            close(output.parent)
            close(errors.parent)
            return failure.code == ENOENT ? .notFound : .failed("cannot start \(program): \(String(cString: strerror(failure.code)))")
        }
        let run = await child.collect(output: output.parent, errors: errors.parent, outputLimit: Self.outputLimit, by: deadline)
        if run.timedOut { return .timedOut }
        if run.outputTooLarge { return .failed("printed more than \(Self.outputLimit / 1024) KiB") }
        if case .exited(0) = run.ending { return .ok(output: String(decoding: run.output, as: UTF8.self)) }
        let how = switch run.ending {
        case .exited(let code): "exit status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
        let message = String(decoding: run.errors, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return .failed(how + (message.isEmpty ? "" : ": \(message)"))
    }

    /// The daemon's environment without `TMUX` and `TMUX_PANE`.
    private static func environment() -> [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("TMUX="), !text.hasPrefix("TMUX_PANE=") { entries.append(text) }
            cursor += 1
        }
        return entries
    }

    private static func socketPair() -> (parent: Int32, child: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, SocketConstants.stream | SocketConstants.closeOnExec, 0, &fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }
}
