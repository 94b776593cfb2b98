import Glibc
import LifelineCore
import LifelinePlatform
import Synchronization

/// `libnotify` sink: the desktop toast, the top-level surface. One toast per
/// outage: created when the outage is published, updated in place when the state
/// changes within it, and turned in place into a short "Back online — offline for
/// 2m 13s" when it ends. Actions "Check now" (also a click on the toast) and
/// "Mute for 1 hour", when the server supports actions, each shown once whatever
/// the server draws (`ToastServer`); the answer to "Check now" is shown in the
/// toast. The rules are `ToastPolicy`'s.
///
/// The notification server may be missing, crash, restart or hang: nothing fails
/// and nothing else in the daemon waits for it (libnotify runs on a thread of its
/// own). Whether a server is on the bus is reported to the core, so other sinks
/// (tmux's display-message) stand in when there is none.
///
/// Where the network's captive-portal API counts the session down, one toast
/// before it ends (`SessionWarning`), with "Extend" where the API allows it.
///
/// Config keys:
/// - `back_online` (bool, default true): show "Back online" when an outage ends.
/// - `session_warning` (duration, default `"10m"`): the toast comes when this
///   much of the session is left, by the API's `seconds-remaining`.
/// - `session_warning_bytes` (integer, bytes, default 10000000): or when the
///   API's `bytes-remaining` is at most this.
/// - `quality_alert` (bool, default false): a toast when the connection stays
///   `poor` while online, once per episode (`QualityAlert`).
/// - `quality_alert_after` (duration, default 2m, 10s…1h): how long `poor` must
///   hold before that toast, and how long it must be gone before the episode ends.
public struct NotifySink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var backOnline = true
        public var sessionWarning = ConfigDuration.seconds(600)
        public var sessionWarningBytes = 10_000_000
        public var qualityAlert = false
        public var qualityAlertAfter = ConfigDuration.seconds(120)

        enum CodingKeys: String, CodingKey {
            case backOnline = "back_online"
            case sessionWarning = "session_warning"
            case sessionWarningBytes = "session_warning_bytes"
            case qualityAlert = "quality_alert"
            case qualityAlertAfter = "quality_alert_after"
        }

        public func validate() throws(ConfigValueError) {
            try require("session_warning", sessionWarning, in: .seconds(0)...(.seconds(86400)))
            try require("session_warning_bytes", sessionWarningBytes, in: 0...(1 << 50), unit: "bytes")
            try require("quality_alert_after", qualityAlertAfter, in: .seconds(10)...ConfigDuration.seconds(3600))
        }
    }

    public static let kind = "libnotify"
    public static let summary = "Shows one desktop notification per outage, updated in place and turned into \"Back online\" on recovery."

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        try config.validate()
        self.config = config
        self.context = context
    }

    private enum Input: Sendable {
        /// A new update waits in `pending` (at most one nudge is queued at a time).
        case updateWaiting
        case server(Notifier.Event)
        case checkFinished
        /// The mute may have run out.
        case muteTimer
        /// The session's warning may have fallen due.
        case sessionTimer
        /// A hold of the quality alert may have run out.
        case qualityTimer
    }

    public func run(updates: SinkUpdates) async throws {
        let (events, eventSink) = AsyncStream<Notifier.Event>.makeStream()
        let notifier = Notifier(events: eventSink)
        let (inputs, input) = AsyncStream<Input>.makeStream()
        // While the server keeps us waiting, updates are not queued one by one:
        // only the newest waits, so a toast that is finally shown is the current one.
        let pending = NewestUpdate()
        // The toast work runs apart from reading updates, so that the end of the
        // updates (daemon exit) is noticed even while a hung server holds a call.
        // It is not awaited: a call stuck on a hung server ends on its own, and
        // whatever the worker sends after `shutdown` below is dropped.
        Task { await serve(inputs, input: input, pending: pending, notifier: notifier) }
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in events { input.yield(.server(event)) }
            }
            for await update in updates {
                if pending.put(update) { input.yield(.updateWaiting) }
            }
            group.cancelAll()
        }
        input.finish()
        await notifier.shutdown(waitingAtMost: .seconds(2))
    }

    private func serve(_ inputs: AsyncStream<Input>, input: AsyncStream<Input>.Continuation,
                       pending: NewestUpdate, notifier: Notifier) async {
        var policy = ToastPolicy(backOnlineMessage: config.backOnline)
        var latest: Update?
        var serverSeen = false
        var muteTimer: (until: Int64, task: Task<Void, Never>)?
        var warning = SessionWarning(time: config.sessionWarning.duration, bytes: Int64(config.sessionWarningBytes))
        var sessionTimer: (at: Int64, task: Task<Void, Never>)?
        var qualityAlert = config.qualityAlert ? QualityAlert(hold: config.qualityAlertAfter.duration) : nil
        var qualityTimer: (at: Int64, task: Task<Void, Never>)?
        for await next in inputs {
            let now = WallClock.micros()
            switch next {
            case .updateWaiting:
                guard let update = pending.take() else { continue }
                latest = update
                // The quality toast first: one that an outage ends closes before the outage toast shows.
                if let q = qualityAlert?.take(update, now: now) { await apply(q, to: notifier) }
                await apply(policy.take(update, now: now), to: notifier)
                if let toast = warning.take(update.event, now: now), !update.isMuted(at: now) {
                    await warn(toast, notifier: notifier)
                }
            case .sessionTimer:
                if let latest, let toast = warning.due(latest.event, now: now), !latest.isMuted(at: now) {
                    await warn(toast, notifier: notifier)
                }
            case .qualityTimer:
                qualityTimer = nil  // a tick a little early is scheduled again below
                if let latest, let q = qualityAlert?.take(latest, now: now) { await apply(q, to: notifier) }
            case .server(.qualityClosed):
                qualityAlert?.closedByServer()
            case .muteTimer:
                if let latest { await apply(policy.take(latest, now: now), to: notifier) }
            case .checkFinished:
                if let latest { await apply(policy.checkFinished(current: latest, now: now), to: notifier) }
            case .server(.closed(let reason)):
                policy.closedByServer(reason)
            case .server(.serverVanished):
                context.logger.warning(serverSeen ? "notification server left the session bus"
                                                  : "no notification server on the session bus\(Self.displayNote())")
                context.control.reportNotificationServer(present: false)
                policy.serverVanished()
                qualityAlert?.serverVanished()
            case .server(.serverAppeared):
                context.logger.info(serverSeen ? "notification server is back" : "a notification server is on the session bus")
                serverSeen = true
                context.control.reportNotificationServer(present: true)
                qualityAlert?.serverAppeared()
                await apply(policy.serverAppeared(current: latest, now: now), to: notifier)
            case .server(.action(let action)):
                policy.actionWasInvoked()
                handle(action: action) { input.yield(.checkFinished) }
            }
            // A mute that runs out during an outage must bring its toast back,
            // though no update comes with its end.
            if let latest, latest.outage?.isOver == false, latest.isMuted(at: now) {
                if muteTimer?.until != latest.mutedUntil {
                    muteTimer?.task.cancel()
                    let wait = Duration.microseconds(latest.mutedUntil - now)
                    muteTimer = (latest.mutedUntil, Task {
                        do { try await Task.sleep(for: wait) } catch { return }
                        input.yield(.muteTimer)
                    })
                }
            } else if let timer = muteTimer {
                timer.task.cancel()
                muteTimer = nil
            }
            // The session's end comes with no update: a timer of its own.
            if let due = warning.dueAt, due > now {
                if sessionTimer?.at != due {
                    sessionTimer?.task.cancel()
                    let wait = Duration.microseconds(due - now)
                    sessionTimer = (due, Task {
                        do { try await Task.sleep(for: wait) } catch { return }
                        input.yield(.sessionTimer)
                    })
                }
            } else if let timer = sessionTimer {
                timer.task.cancel()
                sessionTimer = nil
            }
            // A hold that runs out brings no update either.
            let check = qualityAlert?.nextCheck
            if qualityTimer?.at != check {
                qualityTimer?.task.cancel()
                qualityTimer = check.map { at in
                    (at, Task {
                        do { try await Task.sleep(for: .microseconds(max(0, at - WallClock.micros()))) } catch { return }
                        input.yield(.qualityTimer)
                    })
                }
            }
        }
        muteTimer?.task.cancel()
        sessionTimer?.task.cancel()
        qualityTimer?.task.cancel()
    }

    /// The session's one warning: a short toast of its own, never the outage's.
    private func warn(_ toast: Toast, notifier: Notifier) async {
        context.logger.info("toast: \(toast.summary)")
        do { try await notifier.showBackOnline(toast) } catch {
            context.logger.warning("notification not shown: \(error)")
        }
    }

    /// Why no server may be there on a first run: none can draw without a display.
    static func displayNote() -> String {
        let display = getenv("DISPLAY").map { String(cString: $0) } ?? ""
        let wayland = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? ""
        guard display.isEmpty, wayland.isEmpty else { return "" }
        return ", and no display (DISPLAY and WAYLAND_DISPLAY are unset): no toasts until a server appears"
    }

    private func apply(_ actions: [QualityAlert.Action], to notifier: Notifier) async {
        for action in actions {
            switch action {
            case .show(let toast):
                do { try await notifier.showQuality(toast) } catch {
                    context.logger.warning("quality notification not shown: \(error)")
                }
            case .close:
                await notifier.closeQuality()
            }
        }
    }

    private func apply(_ actions: [ToastPolicy.Action], to notifier: Notifier) async {
        for action in actions {
            do {
                switch action {
                case .show(let toast):
                    try await notifier.show(withSignIn(toast), new: true)
                case .update(let toast):
                    try await notifier.show(withSignIn(toast), new: false)
                case .close:
                    await notifier.close()
                case .backOnline(let toast):
                    try await notifier.showBackOnline(toast)
                }
            } catch {
                context.logger.warning("notification not shown: \(error)")
            }
        }
    }

    /// "Open sign-in page" only when a probe announced the page to open.
    private func withSignIn(_ toast: Toast) -> Toast {
        var toast = toast
        toast.hasSignInAction = toast.hasSignInAction && context.control.signInPage != nil
        return toast
    }

    private func handle(action: String, checked: @escaping @Sendable () -> Void) {
        switch action {
        case Toast.signInAction, Toast.extendAction:
            context.logger.info("toast: open the sign-in page")
            context.control.openSignInPage()
        case "default", Toast.checkNowAction:
            context.logger.info("toast: check now")
            let control = context.control
            Task {
                _ = await control.check(timeout: .seconds(10))
                checked()
            }
        case Toast.retryJobsAction, Toast.cancelJobsAction:
            let retry = action == Toast.retryJobsAction
            context.logger.info("toast: \(retry ? "retry" : "cancel") the waiting commands")
            context.control.jobs?.request(retry ? .retry : .cancel)
        case Toast.muteAction:
            context.logger.info("toast: muted for 1 hour")
            context.control.mute(for: .seconds(3600))
        default:
            context.logger.warning("toast: unknown action '\(action)' ignored")
        }
    }
}
