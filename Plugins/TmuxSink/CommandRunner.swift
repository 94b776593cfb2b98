import LifelineCore
import Subprocess

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Runs one short program (tmux) as argv, never through a shell, with
/// a time limit: a stopped tmux server must not hold the sink forever.
struct CommandRunner: Sendable {
    enum Outcome: Equatable, Sendable {
        case ok(output: String)
        case failed(String)
        case notFound
        case timedOut
    }

    var timeout: Duration = .seconds(2)

    func run(_ program: String, _ arguments: [String]) async -> Outcome {
        let executable: Executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
        let options = PlatformOptions()  // no teardown steps: past the time limit, SIGKILL
        let timeout = self.timeout
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                do {
                    let result = try await Subprocess.run(
                        executable,
                        arguments: Arguments(arguments),
                        // Inside a tmux pane, $TMUX would point tmux at that server's
                        // current client; every call here names its target.
                        environment: .inherit.updating(["TMUX": nil, "TMUX_PANE": nil]),
                        platformOptions: options,
                        input: .none,
                        output: .string(limit: 64 * 1024),
                        error: .string(limit: 4096)
                    )
                    if result.terminationStatus.isSuccess { return .ok(output: result.standardOutput) }
                    let message = result.standardError.split(separator: "\n").first.map(String.init) ?? ""
                    return .failed("\(result.terminationStatus)" + (message.isEmpty ? "" : ": \(message)"))
                } catch let error as SubprocessError where error.code == .executableNotFound {
                    return .notFound
                } catch {
                    return .failed("\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .timedOut
        }
    }
}
