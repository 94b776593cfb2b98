import LifelineCore
import LifelineProtocol

/// `tray` sink: an icon in the desktop's tray (StatusNotifierItem: Plasma,
/// waybar, Xfce's panel, GNOME with the AppIndicator extension) that shows the
/// state, with its sentence in the tooltip. A click checks now; its menu offers
/// Check now, Mute for 1 hour / Unmute, the recent outages from the event log,
/// and Open log.
///
/// It is in the default config: like nm-applet's, the icon is where people look
/// for the network. Without a tray host (a bare window manager, a server) it
/// stays quiet, says so at debug level only, and registers when one appears.
///
/// Config keys:
/// - `log` (string): the event log that "Recent outages" and "Open log" read;
///   default the file the config's first `log` sink writes.
public struct TraySink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var log: String?

        enum CodingKeys: String, CodingKey { case log }

        public func validate() throws(ConfigValueError) {
            if let log, !log.hasPrefix("/") { throw ConfigValueError(key: "log", "must be an absolute path, got '\(log)'") }
        }
    }

    public static let kind = "tray"
    public static let summary = "Shows a tray icon (StatusNotifierItem) for the state, with a menu: check now, mute, recent outages, open the log."

    /// How many outages the menu lists.
    static let recentCount = 5
    /// How long "Recent outages" waits for the log sink to write a transition.
    static let logCatchUp = Duration.seconds(2)

    let config: Config
    let context: PluginContext
    let logPath: String

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
        logPath = config.log ?? context.paths.defaultLogFile
    }

    public func run(updates: SinkUpdates) async throws {
        let (events, eventSink) = AsyncStream<TrayEvent>.makeStream()
        let item = StatusNotifierItem(events: eventSink, look: TrayLook(Update(event: context.control.current, isTransition: false), now: WallClock.micros()))
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in events { handle(event, item: item) }
            }
            var refresh: Task<Void, Never>?
            var muteEnd: Task<Void, Never>?
            var first = true
            for await update in updates {
                let now = WallClock.micros()
                item.show(TrayLook(update, now: now), transition: update.isTransition)
                if first || update.isTransition {
                    refresh?.cancel()
                    refresh = Task { await refreshOutages(item, upTo: update.event.sequence) }
                }
                first = false
                // A mute that runs out brings "Mute for 1 hour" back, though no update comes with its end.
                muteEnd?.cancel()
                muteEnd = nil
                if update.isMuted(at: now) {
                    muteEnd = Task {
                        do { try await Task.sleep(for: .microseconds(update.mutedUntil - now)) } catch { return }
                        item.show(TrayLook(update, now: WallClock.micros()), transition: false)
                    }
                }
            }
            refresh?.cancel()
            muteEnd?.cancel()
            group.cancelAll()
        }
        await item.close()
    }

    private func handle(_ event: TrayEvent, item: StatusNotifierItem) {
        let log = context.logger
        switch event {
        case .activate, .check:
            log.info("tray: check now")
            let control = context.control
            Task { _ = await control.check(timeout: .seconds(10)) }
        case .mute:
            log.info("tray: muted for 1 hour")
            context.control.mute(for: .seconds(3600))
        case .unmute:
            log.info("tray: unmuted")
            context.control.mute(for: .zero)
        case .signIn:
            log.info("tray: open the sign-in page")
            context.control.openSignInPage()
        case .openLog:
            do { try LogOpener.open(logPath) } catch { log.warning("tray: cannot open \(logPath): \(error)") }
        case .outagesAboutToShow:
            Task { await refreshOutages(item, upTo: nil) }
        case .registered:
            log.debug("tray: registered with the tray host")
        case .registrationFailed(let message):
            log.debug("tray: the tray host did not take the icon: \(message)")
        case .watcherAppeared:
            log.debug("tray: a tray host is on the session bus")
        case .watcherVanished:
            log.debug("tray: no tray host on the session bus (no org.kde.StatusNotifierWatcher); the icon waits for one")
        case .noBus(let message):
            log.debug("tray: no icon: \(message)")
        }
    }

    /// Lists the last outages of the log in the menu, once the log holds the
    /// transition `sequence` (the log sink writes it at about the same moment).
    private func refreshOutages(_ item: StatusNotifierItem, upTo sequence: UInt64?) async {
        if let sequence, sequence > 0 {
            let clock = ContinuousClock()
            let deadline = clock.now + Self.logCatchUp
            while (EventLog.lastSequence(path: logPath) ?? 0) < sequence, clock.now < deadline {
                do { try await Task.sleep(for: .milliseconds(50)) } catch { return }
            }
        }
        item.setOutages(Self.recentOutages(logPath, now: WallClock.micros()))
    }

    /// The last `recentCount` outages of the log, newest first, as menu lines.
    static func recentOutages(_ path: String, now: Int64) -> [String] {
        let outages = OutageHistory.outages(from: EventLog.read(path: path).events)
        return outages.suffix(recentCount).reversed().map { TrayText.outage($0, now: now) }
    }
}
