import LifelineCore

/// `libnotify` sink: the desktop toast, the top-level surface (SPEC §3, §5).
/// One toast per outage: created when the outage is published, updated in place
/// when the state changes within it, closed when it ends, then (optionally) a
/// short "Back online — offline for 2m 13s". Actions "Check now" (also a click
/// on the toast) and "Mute for 1 hour", when the server supports actions.
///
/// The notification server may be missing, crash or restart: nothing fails; a
/// server that appears while an outage is on shows its toast again, once. With
/// no server the alert is logged (and the tmux sink's display-message stands in).
///
/// Config keys:
/// - `back_online` (bool, default true): show "Back online" when an outage ends.
public struct NotifySink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var backOnline = true

        enum CodingKeys: String, CodingKey { case backOnline = "back_online" }
    }

    public static let kind = "libnotify"
    public static let summary = "Shows one desktop notification per outage, updated in place and closed on recovery."

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    private enum Input: Sendable {
        case update(Update)
        case server(Notifier.Event)
    }

    public func run(updates: SinkUpdates) async throws {
        let (events, eventSink) = AsyncStream<Notifier.Event>.makeStream()
        let notifier = Notifier(events: eventSink)
        defer { notifier.shutdown() }
        let (inputs, input) = AsyncStream<Input>.makeStream()
        var policy = ToastPolicy(backOnlineMessage: config.backOnline)
        var latest: Update?
        // Until the bus watch says otherwise, assume a server: a toast that fails is logged anyway.
        var serverUp = true
        var serverSeen = false

        await withDiscardingTaskGroup { group in
            group.addTask {
                for await update in updates { input.yield(.update(update)) }
                input.finish()
            }
            group.addTask {
                for await event in events { input.yield(.server(event)) }
            }
            for await next in inputs {
                let now = WallClock.micros()
                switch next {
                case .update(let update):
                    latest = update
                    apply(policy.take(update, now: now), to: notifier, serverUp: serverUp)
                case .server(.closed):
                    policy.closedByServer()
                case .server(.serverVanished):
                    if serverUp {
                        context.logger.warning(serverSeen ? "notification server left the session bus"
                                                          : "no notification server on the session bus")
                    }
                    serverUp = false
                case .server(.serverAppeared):
                    if !serverUp, let latest {
                        context.logger.info(serverSeen ? "notification server is back" : "a notification server appeared")
                        serverUp = true
                        apply(policy.serverRestarted(current: latest, now: now), to: notifier, serverUp: true)
                    }
                    serverUp = true
                    serverSeen = true
                case .server(.action(let action)):
                    handle(action: action)
                }
            }
            group.cancelAll()
        }
    }

    private func apply(_ actions: [ToastPolicy.Action], to notifier: Notifier, serverUp: Bool) {
        for action in actions {
            do {
                switch action {
                case .show(let toast):
                    guard serverUp else {
                        context.logger.warning("no notification server: outage alert '\(toast.summary)' not shown as a toast")
                        continue
                    }
                    try notifier.show(toast, new: true)
                case .update(let toast):
                    try notifier.show(toast, new: false)
                case .close:
                    notifier.close()
                case .backOnline(let toast):
                    if serverUp { try notifier.showTransient(toast) }
                }
            } catch {
                context.logger.warning("notification not shown: \(error)")
            }
        }
    }

    private func handle(action: String) {
        switch action {
        case "default", "retry":
            context.logger.info("toast: check now")
            let control = context.control
            Task { _ = await control.check(timeout: .seconds(10)) }
        case "mute":
            context.logger.info("toast: muted for 1 hour")
            context.control.mute(for: .seconds(3600))
        default:
            context.logger.warning("toast: unknown action '\(action)' ignored")
        }
    }
}
