import LifelineCore
import LifelinePlatform

/// Runs one short program (tmux) as argv, never through a shell, with
/// a time limit: a stopped tmux server must not hold the sink forever.
///
/// Waiting for the child blocks, so each run gets a thread of its own: a
/// stopped server's tmux holds neither Swift's cooperative pool (where the
/// debounce timer and the other sinks run) nor the runs for the other servers.
struct CommandRunner: Sendable {
    enum Outcome: Equatable, Sendable {
        case ok(output: String)
        case failed(String)
        case notFound
        case timedOut
    }

    var timeout: Duration = .seconds(2)

    func run(_ program: String, _ arguments: [String]) async -> Outcome {
        let timeout = self.timeout
        let thread = SerialThread(name: "lifeline-tmux")
        defer { thread.stop() }
        do {
            // Cancelled, the caller goes on at once; the run still ends at its
            // time limit, its child killed and reaped.
            return try await thread.run { SpawnedCommand.run(program, arguments, timeout: timeout) }
        } catch {
            return .failed("\(error)")
        }
    }
}
