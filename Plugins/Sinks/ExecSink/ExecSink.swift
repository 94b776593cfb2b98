import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform

/// `exec` sink: hook scripts, the door for third-party reactions to the state
/// (a VPN to start, a sync to resume), like NetworkManager's dispatcher in user
/// space. On each published transition every file in the hook folders runs, in
/// name order, with the event in its environment and as one JSON line (the
/// event log's) on its standard input:
///
///     LIFELINE_STATE  LIFELINE_PREVIOUS  LIFELINE_INTERFACE  LIFELINE_KIND
///     LIFELINE_REASON  LIFELINE_SINCE  LIFELINE_SEQUENCE  LIFELINE_RTT_MS  LIFELINE_METERED
///
/// and `argv` = [the file, the state, the interface]; never through a shell.
/// A name ending in states (`50-vpn.offline`, `60-x.limited,portal`) runs only
/// on those. Each hook has its own lane: a slow or hung hook holds no other
/// hook and no other sink, and while it runs only the newest event waits for
/// it. Past `timeout` its process group gets SIGTERM, and SIGKILL 2 s later.
/// Its output goes to the daemon's log, a few cleaned lines at most. A file that
/// someone else could have written is refused, with a log line that names it
/// and says why (`HookCheck`).
///
/// Config keys:
/// - `folders` (array of strings, default `["$XDG_CONFIG_HOME/lifeline/hooks.d",
///   "/etc/lifeline/hooks.d"]`): where hooks are; on an equal name the file of
///   the earlier folder runs and the later one does not.
/// - `timeout` (duration, default `"10s"`): how long one run may take.
public struct ExecSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        /// Empty: the user's folder, then the system's.
        public var folders: [String] = []
        public var timeout = ConfigDuration.seconds(10)

        public func validate() throws(ConfigValueError) {
            if let relative = folders.first(where: { !$0.hasPrefix("/") }) {
                throw ConfigValueError(key: "folders", "must hold absolute paths, got '\(relative)'")
            }
            try require("timeout", timeout, in: .milliseconds(100)...ConfigDuration.seconds(3600))
        }
    }

    public static let kind = "exec"
    public static let summary = "Runs the hook scripts of hooks.d on each published transition."
    public static let systemFolder = "/etc/lifeline/hooks.d"
    static let daemonOnly: Set<String> = [
        "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC",
    ]

    let folders: [String]
    let timeout: Duration
    let context: PluginContext
    /// The daemon's own environment, without any `LIFELINE_` variable (the
    /// event's are added to it for each run) nor what systemd meant for the
    /// daemon alone: its notification socket, passed sockets and watchdog.
    private let baseEnvironment: [String]

    /// Where a script gets a link under its own name to the descriptor it
    /// runs from (private to the user, like the state file's folder).
    private let linkFolder: String

    public init(config: Config, context: PluginContext) throws {
        folders = config.folders.isEmpty ? [context.paths.hooksDir, Self.systemFolder] : config.folders
        linkFolder = context.paths.runtimeDir + "/lifeline/hooks"
        timeout = config.timeout.duration
        self.context = context
        baseEnvironment = Environment.current
            .filter { !$0.key.hasPrefix("LIFELINE_") && !Self.daemonOnly.contains($0.key) }
            .map { "\($0.key)=\($0.value)" }
    }

    public func run(updates: SinkUpdates) async throws {
        let logger = context.logger
        let timeout = timeout
        let lanes = HookLanes(
            start: { [self] job in start(job) },
            finish: { process, stopRequested, stopNotice in
                let began = ContinuousClock.now
                let (outcome, output) = process.wait(timeout: timeout, stopRequested: stopRequested, stopNotice: stopNotice) { line in
                    logger.info("hook \(process.path): \(line)")
                }
                if output.discardedBytes > 0 {
                    logger.warning("hook \(process.path): \(output.discardedBytes) more bytes of output not logged")
                }
                let took = "\(Int(((ContinuousClock.now - began) / .milliseconds(1)).rounded())) ms"
                switch outcome {
                case .exited(0): logger.debug("hook \(process.path) done in \(took)")
                case .exited(let code): logger.warning("hook \(process.path) exited with status \(code)")
                case .signaled(let signal): logger.warning("hook \(process.path) was killed by signal \(signal)")
                case .timedOut(let killed):
                    logger.warning("hook \(process.path) stopped after \(took) (timeout \(DurationText.format(timeout))) with \(killed ? "SIGKILL" : "SIGTERM")")
                case .stopped(let killed):
                    logger.notice("hook \(process.path) stopped with \(killed ? "SIGKILL" : "SIGTERM") as the exec sink ends")
                }
            })
        var lastRun: UInt64?
        for await update in updates {
            // Sequence 0 is the start-up `unknown`; a replay after a restart of
            // the sink must not run the hooks twice for one transition.
            guard update.isTransition, update.event.sequence != lastRun else { continue }
            lastRun = update.event.sequence
            for hook in HookFolders.scan(folders) {
                if hook.runs(on: update.event.state) {
                    lanes.offer(HookLanes.Job(hook: hook, event: update.event))
                } else {
                    lanes.cancelPending(hook.name)
                }
            }
        }
        await lanes.stop()
    }

    /// Checks the file and starts it; nil (and a log line) when it may not run.
    private func start(_ job: HookLanes.Job) -> HookProcess? {
        let hook: OpenedHook
        switch HookCheck.open(job.hook.path) {
        case .success(let opened): hook = opened
        case .failure(let refused):
            context.logger.error("\(refused)")
            return nil
        }
        let e = job.event
        let environment = baseEnvironment + [
            "LIFELINE_STATE=\(e.state.rawValue)",
            "LIFELINE_PREVIOUS=\(e.previous.rawValue)",
            "LIFELINE_INTERFACE=\(e.interface)",
            "LIFELINE_KIND=\(e.kind.rawValue)",
            "LIFELINE_REASON=\(e.reason)",
            "LIFELINE_SINCE=\(e.since)",
            "LIFELINE_SEQUENCE=\(e.sequence)",
            "LIFELINE_RTT_MS=\(JSONText.number(e.rttMs))",
            "LIFELINE_METERED=\(e.metered ? "true" : "false")",
        ]
        do {
            return try HookProcess(
                path: job.hook.path, hook: hook, arguments: [e.state.rawValue, e.interface], environment: environment,
                input: Array((JSONText.object(e) + "\n").utf8),
                linkFolder: (try? Files.makePrivateDirectory(linkFolder, privateRoot: context.paths.runtimeDir)) != nil ? linkFolder : nil)
        } catch {
            context.logger.error("\(error)")
            return nil
        }
    }
}
