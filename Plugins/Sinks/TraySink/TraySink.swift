import LifelineCore
import LifelineFormats
import LifelinePlatform
import LifelineReport

/// `tray` sink: an icon in the desktop's tray (StatusNotifierItem: Plasma,
/// waybar, Xfce's panel, GNOME with the AppIndicator extension) that shows the
/// state, with its sentence in the tooltip. A click checks now; its menu offers
/// Check now, Mute for 1 hour / Unmute, the recent outages from the event log
/// with Open report (the `history --report` page), and Open log.
///
/// It is in the default config: like nm-applet's, the icon is where people look
/// for the network. Without a tray host (a bare window manager, a server) it
/// stays quiet, says so at debug level only, and registers when one appears.
///
/// Config keys:
/// - `log` (string): the event log that "Recent outages" and "Open log" read;
///   default the daemon's event log (the file the config's first `log` sink writes).
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

    let config: Config
    let context: PluginContext
    /// Asked each time: a reload may move the daemon's event log.
    var logPath: String { config.log ?? context.services.eventLog.current }

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public func run(updates: SinkUpdates) async throws {
        let (events, eventSink) = AsyncStream<TrayEvent>.makeStream()
        let item = StatusNotifierItem(events: eventSink, look: TrayLook(Update(event: context.control.current, isTransition: false), now: WallClock.micros()))
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in events { handle(event, item: item) }
            }
            // Once at start, for a host that never says it opens the submenu;
            // after that only when one does (`outagesAboutToShow`).
            group.addTask { await refreshOutages(item) }
            var muteEnd: Task<Void, Never>?
            for await update in updates {
                let now = WallClock.micros()
                item.show(TrayLook(update, now: now), transition: update.isTransition)
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
        case .venue:
            // Only ever an https:// page: the probe keeps no other from the network's answer.
            guard let page = context.control.current.captivePortal?.venueInfoURL, page.lowercased().hasPrefix("https://") else { break }
            log.info("tray: open the venue's page")
            do { try DesktopOpener.open(page) } catch { log.warning("tray: cannot open \(page): \(error)") }
        case .openLog:
            do { try DesktopOpener.open(logPath) } catch { log.warning("tray: cannot open \(logPath): \(error)") }
        case .openReport:
            let (logPath, page) = (self.logPath, context.paths.runtimeDir + "/lifeline/report.html")
            // Reading a month of log and writing the page blocks: not on the pool,
            // where the debounce timer runs.
            let started = DetachedThread.start {
                do {
                    try Self.writeReport(log: logPath, to: page, now: WallClock.micros())
                    try DesktopOpener.open(page)
                } catch {
                    log.warning("tray: cannot open the report: \(error)")
                }
            }
            if !started { log.warning("tray: cannot open the report: no thread to write it on") }
        case .outagesAboutToShow:
            Task { await refreshOutages(item) }
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
        case .busLost:
            log.debug("tray: the session bus went away; the icon comes back with it")
        }
    }

    /// Lists the last outages of the log in the menu. The log and its
    /// rotations are read through `Blocking`: megabytes of reading must
    /// not hold a thread of the pool, where the debounce timer runs. A host
    /// that asks again while a read is under way gets that read's answer.
    private func refreshOutages(_ item: StatusNotifierItem) async {
        guard item.startReadingOutages() else { return }
        defer { item.doneReadingOutages() }
        let path = logPath
        guard let lines = await Blocking.runUnlessCancelled({ Self.recentOutages(path, now: WallClock.micros()) }) else { return }
        item.setOutages(lines)
    }

    /// The report of the last 30 days, as `lifeline history --report` writes it,
    /// at `path`: private (0600) in a private folder, as it tells where and when
    /// the user was online.
    static func writeReport(log: String, to path: String, now: Int64) throws {
        try Files.makeDirectories(Files.directory(of: path))
        let page = ReportPage.user(Report(EventLog.read(path: log), now: now), writtenAt: now).render()
        try Files.replaceAtomically(path, with: page, mode: 0o600)
    }

    /// The last `recentCount` outages of the log, newest first, as menu lines.
    static func recentOutages(_ path: String, now: Int64) -> [String] {
        let outages = OutageHistory.outages(from: EventLog.read(path: path).events)
        return outages.suffix(recentCount).reversed().map { TrayText.outage($0, now: now) }
    }
}
