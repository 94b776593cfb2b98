import ArgumentParser
import Glibc
import LifelineCore

/// `lifeline wait-online`: like `nm-online`, for scripts and units that need the
/// internet, not just a route.
struct WaitOnlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait-online",
        abstract: "Wait until the daemon says online.",
        discussion: """
            Exits 0 as soon as the daemon publishes online (its StateChanged signal on the \
            session bus: no polling), 1 when --timeout passes first, with the state and its \
            reason on standard error. Without a daemon it looks once itself (the kernel's \
            routes and one HTTP check with the configured probe settings) and exits 0 or 1.
            """
    )

    @Option(help: "How long to wait: 500ms, 30s, 2m.")
    var timeout: String = "30s"

    func run() async throws {
        let limit = try parseDuration(timeout, option: "--timeout")
        SignalPipe.install()
        switch await waitForOnline(timeout: limit) {
        case .online:
            return
        case .notOnline(let state, let reason):
            printError("still \(state.rawValue) after \(DurationText.format(limit)): \(reason)")
        case .noDaemonNotOnline(let answer):
            printError("no daemon runs; looked once: \(answer.state.rawValue): \(answer.reason)")
        case .interrupted(let signal):
            // As `sleep` would end: a shell stops the script that ran us only for a death by SIGINT.
            ChildCommand.die(of: signal)
        case .failed(let why):
            printError(why)
        }
        throw ExitCode(1)
    }
}

/// `--timeout` and friends: a duration as the config writes them.
func parseDuration(_ text: String, option: String) throws -> Duration {
    do {
        return try DurationText.parse(text)
    } catch {
        printError("\(option): \(error)")
        throw ExitCode.validationFailure
    }
}

enum WaitOutcome {
    case online
    case notOnline(ConnectivityState, String)
    case noDaemonNotOnline(LocalCheck.Answer)
    /// A signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ended the wait.
    case interrupted(Int32)
    case failed(String)
}

/// Waits for `online` through the daemon; without one, answers from one look.
func waitForOnline(timeout: Duration) async -> WaitOutcome {
    let events: DaemonEvents
    do {
        events = try DaemonEvents(client: try DaemonClient.connect())
    } catch .noDaemon {
        let answer = await LocalCheck.run(logger: bootstrapLogging())
        return answer.state == .online ? .online : .noDaemonNotOnline(answer)
    } catch {
        return .failed("cannot ask the daemon: \(error)")
    }
    return events.waitForOnline(until: .now + timeout)
}

extension DaemonEvents {
    /// Returns when the daemon says online, the deadline passes or a signal ends the wait.
    func waitForOnline(until deadline: ContinuousClock.Instant?) -> WaitOutcome {
        var gone = false
        while current.state != .online || gone {
            switch next(until: deadline) {
            case .state, .jobs, .signal(SIGCHLD):
                continue
            case .daemonBack:
                gone = false
            case .daemonGone:
                gone = true
            case .signal(let raw):
                return .interrupted(raw & ~SignalPipe.sentByProcess)
            case .timedOut:
                return gone ? .notOnline(.unknown, "the daemon left the bus") : .notOnline(current.state, current.reason)
            case .busLost:
                return .failed("lost the session bus")
            }
        }
        return .online
    }
}
