import ArgumentParser
import Glibc
import LifelineCore
import LifelineDBus

/// `lifeline run -- CMD ARG…`: runs a command once the network is there, and
/// again when it failed because the network went away while it ran.
///
/// While it waits the command is a job of the daemon (`Jobs` on D-Bus, counted
/// in the outage toast), so the user can run it at once (Retry) or give up
/// (Cancel) from the toast or over D-Bus. The job belongs to this process's bus
/// connection and goes when it ends, however it ends.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command when online; run it again if it failed because the connection dropped.",
        discussion: """
            Waits for online (as wait-online), then runs CMD with your standard input, output \
            and error, and exits with its status. When CMD fails and the connection was lost \
            while it ran, it waits for online and runs CMD again, up to --retries times. While \
            it waits, the outage toast counts it and offers Retry (run now) and Cancel.
            Exit: CMD's status; when CMD died of signal N, lifeline dies of N too (as timeout \
            does, so Ctrl-C stops a script that runs it); 1 when --timeout passes while \
            waiting for the network; 130 when cancelled before CMD ran (the toast's Cancel, \
            CancelJobs() on D-Bus), and a signal that cancels the wait (Ctrl-C, SIGTERM) \
            ends lifeline as it would end sleep. While CMD runs, SIGINT, SIGTERM, SIGHUP and \
            SIGQUIT sent to lifeline are passed on to it (Ctrl-C reaches it from the terminal directly), \
            Cancel sends it SIGTERM, and lifeline waits for it and exits with its status; a \
            command stopped that way, or one that died of SIGINT, is not run again. Signals \
            ignored when lifeline starts (nohup) stay ignored in CMD. A restarted daemon is not \
            an outage. CMD runs without a shell, in lifeline's process group.
            Without a daemon it looks once itself, runs CMD once if online, and never retries.
            """
    )

    @Option(help: "The longest time to wait for the network, over all attempts (default: no limit). A running CMD is never stopped by it.")
    var timeout: String?

    @Option(help: "How many times to run CMD again after it failed while the connection was lost.")
    var retries: Int = 3

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("no command: lifeline run [--timeout D] [--retries N] -- CMD ARG…") }
        guard (0...100).contains(retries) else { throw ValidationError("--retries must be 0 to 100, got \(retries)") }
    }

    func run() async throws {
        let argv = command
        let limit = try timeout.map { try parseDuration($0, option: "--timeout") }
        SignalPipe.install()
        let ending: ChildCommand.Ending
        do {
            ending = try await JobRun(argv: argv, retries: retries, deadline: limit.map { .now + $0 }, timeout: limit).run()
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        switch ending {
        case .exited(0): return
        case .exited(let code): throw ExitCode(code)
        case .killed(let signal): ChildCommand.die(of: signal)
        }
    }
}

/// One `lifeline run`: the waits, the attempts and the job on the daemon's board.
struct JobRun {
    let argv: [String]
    let retries: Int
    let deadline: ContinuousClock.Instant?
    let timeout: Duration?

    static let cancelled: Int32 = 130

    var commandLine: String { argv.map(Self.quoted).joined(separator: " ") }

    /// Shown as a shell would need it, so the line in the toast says what runs.
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { s in
            (s.value < 0x80 && (s.properties.isAlphabetic || s.properties.numericType != nil)) || "-_./=:,+@%".unicodeScalars.contains(s)
        }
        return plain ? word : "'" + word.replacingAll("'", with: "'\\''") + "'"
    }

    /// How the last run of the command ended; a wait that ended first gives
    /// `exited` 1 (timeout) or 130 (Cancel), or `killed` by the signal that
    /// cancelled it, which `run` then dies of as the command would have.
    func run() async throws -> ChildCommand.Ending {
        let events: DaemonEvents
        switch Self.connect() {
        case .success(let connected): events = connected
        case .failure(.noDaemon(let why)): return try await runWithoutDaemon(why)
        case .failure(let other): throw other
        }
        let job = BoardEntry(client: events.client, commandLine: commandLine)
        defer { job.remove() }
        var attempt = 0
        while true {
            // Wait for the network (or Retry).
            if events.current.state != .online {
                job.set(attempt == 0 ? .waiting : .retrying)
                switch waitForNetwork(events, job: job) {
                case .go: break
                case .end(let ending): return ending
                }
            }
            job.set(.running)
            let (ending, lost, stopped) = try runOnce(events, job: job)
            if ending == .exited(0) || stopped || !lost || attempt >= retries { return ending }
            attempt += 1
            printError("\(argv[0]) failed (exit \(ending.status)) while the connection was lost; running it again once online (\(attempt) of \(retries))")
        }
    }

    static func connect() -> Result<DaemonEvents, DaemonClient.Failure> {
        Result { () throws(DaemonClient.Failure) -> DaemonEvents in try DaemonEvents(client: try DaemonClient.connect()) }
    }

    enum WaitResult { case go, end(ChildCommand.Ending) }

    private func waitForNetwork(_ events: DaemonEvents, job: BoardEntry) -> WaitResult {
        var gone = false
        while gone || events.current.state != .online {
            switch events.next(until: deadline) {
            case .state, .signal(SIGCHLD):
                continue
            case .jobs(let request):
                guard let id = job.id, request.ids.contains(id) else { continue }
                if request.action == .cancel { return .end(.exited(Self.cancelled)) }
                return .go
            case .daemonGone:
                gone = true
                job.forget()
            case .daemonBack:
                gone = false
                job.add()
            case .signal(let raw):
                // Dies of it, as `sleep` would: a script stops on Ctrl-C here too.
                return .end(.killed(raw & ~SignalPipe.sentByProcess))
            case .timedOut:
                let limit = timeout.map(DurationText.format) ?? "the timeout"
                printError(gone ? "no daemon after \(limit)" : "still \(events.current.state.rawValue) after \(limit): \(events.current.reason)")
                return .end(.exited(1))
            case .busLost:
                printError("lost the session bus while waiting for the network")
                return .end(.exited(1))
            }
        }
        return .go
    }

    /// Runs the command once. Its status, whether the connection was lost
    /// while it ran (a state other than online was published, or is the
    /// daemon's state when it ends; a restarted daemon's `unknown` is not an
    /// outage), and whether it was stopped on purpose (a signal sent to
    /// `lifeline`, Ctrl-C that ended it, Cancel), which is never retried.
    private func runOnce(_ events: DaemonEvents, job: BoardEntry) throws -> (ending: ChildCommand.Ending, lost: Bool, stopped: Bool) {
        let child = try ChildCommand.start(argv)
        var lost = false
        var stopped = false
        while true {
            if let ending = child.ending() {
                lost = lost || Self.isOutage(events.current.state)
                return (ending, lost, stopped || ending == .killed(SIGINT))
            }
            switch events.next(until: nil) {
            case .state(let e):
                if Self.isOutage(e.state) { lost = true }
            case .jobs(let request):
                guard let id = job.id, request.ids.contains(id), request.action == .cancel, !stopped else { continue }
                stopped = true
                child.send(SIGTERM)
            case .signal(SIGCHLD):
                continue
            case .signal(let raw):
                // From the terminal it reached the command already; from kill(1)
                // it is passed on. Either way the command decides what it means.
                if raw & SignalPipe.sentByProcess != 0 { stopped = true }
                child.pass(raw)
            case .daemonGone:
                job.forget()
            case .daemonBack(let e):
                if Self.isOutage(e.state) { lost = true }
                job.add()
                job.set(.running)
            case .timedOut:
                continue
            case .busLost:
                // Nothing more to learn from the daemon: wait for the command alone.
                let ending = child.waitPassingSignals()
                return (ending, false, stopped || ending == .killed(SIGINT))
            }
        }
    }

    /// A state that says the connection was lost. `unknown` is not one: it is
    /// what a daemon that just started says before it has looked.
    static func isOutage(_ state: ConnectivityState) -> Bool {
        state != .online && state != .unknown
    }

    private func runWithoutDaemon(_ why: String) async throws -> ChildCommand.Ending {
        let answer = await LocalCheck.run(logger: bootstrapLogging())
        guard answer.state == .online else {
            printError("no daemon runs (\(why)); looked once: \(answer.state.rawValue): \(answer.reason)")
            return .exited(1)
        }
        printError("no daemon runs (\(why)): online after one look; running once, no retries")
        return try ChildCommand.start(argv).waitPassingSignals()
    }
}

/// This run's entry on the daemon's job board. Every call is best effort: a
/// daemon that cannot take the job does not stop the command from running.
final class BoardEntry {
    let client: DaemonClient
    let commandLine: String
    private(set) var id: String?

    init(client: DaemonClient, commandLine: String) {
        self.client = client
        self.commandLine = commandLine
        add()
    }

    func add() {
        id = (try? client.call("AddJob", [.string(commandLine)], timeout: .seconds(2)))?.first?.string
    }

    /// The daemon that held it is gone; a new one gets a new job.
    func forget() { id = nil }

    func set(_ state: JobState) {
        guard let id else { return }
        _ = try? client.call("SetJobState", [.string(id), .string(state.rawValue)], timeout: .seconds(2))
    }

    func remove() {
        guard let id else { return }
        _ = try? client.call("RemoveJob", [.string(id)], timeout: .seconds(2))
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
