import LifelineCore
import LifelineFormats
import LifelinePlatform

/// The sink's state between steps: what was pushed where.
struct Pusher {
    let sink: TmuxSink
    /// Wall-clock time in µs since the epoch; tests set the time.
    var now: @Sendable () -> Int64 = { WallClock.micros() }
    /// The newest state; the text is rendered from it again on every step, so
    /// `{duration}` moves on without a new update.
    var event: StateEvent?
    /// The value every server should show; nil until the first update.
    var text: String?
    /// Per server: failed attempts with `text` so far, or `Int.max` once it has it.
    var served: [TmuxSocket: Int] = [:]
    /// Per socket seen without a listener: how many times in a row.
    var unanswered: [TmuxSocket: Int] = [:]
    var lastAlertedOutage: UInt64?
    /// An outage that began or went on while alerts were held (sleep, resume
    /// grace, inactive session): the update that lifts the hold alerts it.
    var heldOutage: UInt64?
    var warnedMissingTmux = false
    static let attemptsPerServer = 3
    /// A new socket is looked at again after 50, 100, 200, 400 ms: tmux creates
    /// it (which wakes the sink) a moment before it listens. A socket still
    /// silent after that is left by a server that died, and waits for the
    /// folder to change.
    static let listenChecks = 5

    init(sink: TmuxSink) { self.sink = sink }

    /// Unsets `@lifeline` on every listening server.
    static func clear(sink: TmuxSink) async {
        let sockets = TmuxServers.scan(sink.socketDirectory).filter { TmuxServers.isListening($0.path) }
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask { _ = await sink.runner.run(sink.tmux, ["-S", socket.path, "set-option", "-gu", "@lifeline"]) }
            }
        }
    }

    /// One turn: a new value goes to every server; a rescan only to servers that
    /// do not have it yet (new ones, restarted ones, and ones that failed fewer
    /// times than allowed). A socket with no listener (left by a killed server, or
    /// seen between tmux's bind and listen) is checked with a bare connect, which
    /// costs no process, and tried again soon (`retryDelay`).
    mutating func step(_ update: Update?) async {
        let sockets = TmuxServers.scan(sink.socketDirectory)
        if let update { event = update.event }
        if let event {
            let next = TmuxText.status(event, template: sink.config.format, colors: sink.config.colors, now: now())
            if next != text {
                text = next
                served = [:]
            }
        }
        // Forget servers that are gone, so a reused inode counts as new.
        served = served.filter { entry in sockets.contains(entry.key) }
        unanswered = unanswered.filter { entry in sockets.contains(entry.key) }
        if let text {
            var targets: [TmuxSocket] = []
            for socket in sockets where (served[socket] ?? 0) < Self.attemptsPerServer {
                if TmuxServers.isListening(socket.path) {
                    targets.append(socket)
                    unanswered[socket] = nil
                } else {
                    unanswered[socket, default: 0] += 1
                }
            }
            if !targets.isEmpty { await push(text, to: targets) }
        }
        if let update { await alertIfNeeded(update, sockets: sockets) }
    }

    /// How long until a server that does not have the value yet is tried again:
    /// soon for a socket that may be about to listen, a second for a server
    /// that failed; nil when every server has it (or was given up on).
    func retryDelay() -> Duration? {
        var delays: [Duration] = []
        if let checks = unanswered.values.filter({ $0 < Self.listenChecks }).min() {
            delays.append(.milliseconds(50 << (checks - 1)))
        }
        if served.values.contains(where: { $0 > 0 && $0 < Self.attemptsPerServer }) {
            delays.append(.seconds(1))
        }
        return delays.min()
    }

    /// How long until `{duration}` shows another minute; nil when the template
    /// has no `{duration}` (then nothing but a change of state moves the text).
    /// At most a minute, so a jump of the wall clock is caught up within one.
    func refreshDelay() -> Duration? {
        guard sink.config.format.contains("{duration}"), let since = event?.since else { return nil }
        let minute: Int64 = 60_000_000
        let now = now()
        let elapsed = StatusFormat.elapsed(since: since, now: now).microseconds
        // The next whole minute since `since`; a `since` in the future reads as 0 until then.
        let (nextMinute, overflow) = (elapsed / minute + 1).multipliedReportingOverflow(by: minute)
        let (due, late) = since.addingReportingOverflow(nextMinute)
        guard !overflow, !late else { return .seconds(60) }
        let (delay, wrapped) = due.subtractingReportingOverflow(now)
        guard !wrapped else { return .seconds(60) }
        return .microseconds(min(max(delay, 0), minute))
    }

    private mutating func push(_ text: String, to targets: [TmuxSocket]) async {
        let tmux = sink.tmux
        let runner = sink.runner
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: (TmuxSocket, CommandRunner.Outcome).self) { group in
            for socket in targets {
                group.addTask {
                    (socket, await runner.run(tmux, ["-S", socket.path, "set-option", "-g", "@lifeline", text]))
                }
            }
            var all: [(TmuxSocket, CommandRunner.Outcome)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let took = ContinuousClock.now - started
        sink.context.logger.debug("@lifeline set on \(outcomes.count { $0.1 == .ok(output: "") }) of \(targets.count) servers in \(took.microseconds / 1000) ms")
        for (socket, outcome) in outcomes {
            switch outcome {
            case .ok:
                served[socket] = .max
                warnedMissingTmux = false
            case .notFound:
                served[socket] = .max  // nothing to retry until the value changes
                if !warnedMissingTmux {
                    sink.context.logger.notice("\(tmux) not found in PATH: tmux servers exist but cannot be updated")
                    warnedMissingTmux = true
                }
            case .failed(let why):
                served[socket, default: 0] += 1
                sink.context.logger.debug("\(socket.path): not updated (\(why))")
            case .timedOut:
                served[socket, default: 0] += 1
                sink.context.logger.debug("\(socket.path): tmux did not answer in time")
            }
        }
    }

    // MARK: Alert fallback

    /// One `display-message` per outage, on the transition that starts it (or the
    /// first transition within it after a mute ends, or the update that lifts a
    /// hold of alerts during it), only when no notification server will show the toast.
    private mutating func alertIfNeeded(_ update: Update, sockets: [TmuxSocket]) async {
        guard sink.config.alert != .never, update.event.state.isDegraded,
              let outage = update.outage, !outage.isOver, outage.id != lastAlertedOutage,
              !update.isMuted(at: now())
        else { return }
        if update.alertsHeld {
            heldOutage = outage.id
            return
        }
        guard update.isTransition || heldOutage == outage.id, !sockets.isEmpty else { return }
        if sink.config.alert == .auto, update.notificationServerPresent == true {
            lastAlertedOutage = outage.id  // the toast has this outage
            return
        }
        lastAlertedOutage = outage.id
        let message = TmuxText.alert(update.event)
        let milliseconds = String(sink.config.alertDuration.duration.microseconds / 1000)
        let tmux = sink.tmux
        let runner = sink.runner
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets where TmuxServers.isListening(socket.path) {
                group.addTask {
                    guard case .ok(let output) = await runner.run(tmux, ["-S", socket.path, "list-clients", "-F", "#{client_name}"])
                    else { return }
                    let clients = output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
                    guard !clients.isEmpty else { return }
                    // All clients in one tmux call: commands separated by a lone ";".
                    var arguments = ["-S", socket.path]
                    for (n, client) in clients.enumerated() {
                        if n > 0 { arguments.append(";") }
                        arguments += ["display-message", "-c", client, "-d", milliseconds, message]
                    }
                    _ = await runner.run(tmux, arguments)
                }
            }
        }
        sink.context.logger.info("outage \(outage.id): display-message on tmux clients (no notification server)")
    }
}
