import LifelineCore
import LifelineFormats
import LifelinePlatform
import Synchronization

/// `tmux` sink: pushes the state to every tmux server of the user by setting the
/// global user option `@lifeline`, so `#{@lifeline}` in `status-right` changes the
/// moment the state does (tmux redraws attached clients at once), with no `#()`
/// and no polling of tmux.
///
/// Servers are the sockets in `${TMUX_TMPDIR:-/tmp}/tmux-$UID/`. The folder is
/// watched with inotify, so a server started later gets the value at once, and
/// nothing wakes the daemon while nothing changes; a socket with no server
/// behind it is skipped quietly. No tmux installed, or no server: nothing to
/// do, nothing logged but once.
///
/// When no notification server is on the session bus (as the notification sink
/// sees it; no notification sink counts as none), an outage is also announced
/// once with `display-message` on every attached client.
///
/// Config keys:
/// - `format` (string, default `"{icon} {state}"`): the `status --format`
///   template; tmux styles in it (`#[bold]`) are kept, field values are shown
///   literally. `{duration}` is shown to the minute and refreshed once a minute.
/// - `colors` (bool, default true): wrap the text in `#[fg=…]` by state (green
///   online, yellow portal, orange limited, red offline).
/// - `alert` (`"auto"`, `"always"` or `"never"`, default `"auto"`): the
///   `display-message` fallback; `auto` shows it only when no notification
///   server will show the toast.
/// - `alert_duration` (duration, default `"5s"`): how long the message stays.
public struct TmuxSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var format: String = StatusFormat.defaultTemplate
        public var colors: Bool = true
        public var alert: AlertMode = .auto
        public var alertDuration = ConfigDuration.seconds(5)

        public enum AlertMode: String, ConfigChoice {
            case auto, always, never
        }

        enum CodingKeys: String, CodingKey {
            case format, colors, alert
            case alertDuration = "alert_duration"
        }

        public func validate() throws(ConfigValueError) {
            try require("alert_duration", alertDuration, in: .milliseconds(100)...(.seconds(3600)))
            if format.isEmpty { throw ConfigValueError(key: "format", "must not be empty (default \"{icon} {state}\")") }
            if format.utf8.count > 1024 { throw ConfigValueError(key: "format", "is longer than 1024 bytes") }
        }
    }

    public static let kind = "tmux"
    public static let summary = "Sets @lifeline on every tmux server of the user; display-message alert without a notification server."

    let config: Config
    let context: PluginContext
    /// The socket folder; tests and the benchmark point it elsewhere via TMUX_TMPDIR.
    let socketDirectory: String
    /// How often the folder is read when it cannot be watched (no inotify).
    var rescanInterval: Duration = .seconds(1)
    var runner = CommandRunner()
    var tmux = "tmux"
    /// Called on every turn of the loop; tests count them.
    var onTurn: (@Sendable () -> Void)?

    public init(config: Config, context: PluginContext) throws {
        self.init(config: config, context: context, socketDirectory: TmuxServers.directory())
    }

    /// For tests: another socket folder and a stand-in for tmux.
    init(config: Config, context: PluginContext, socketDirectory: String, tmux: String = "tmux") {
        self.config = config
        self.context = context
        self.socketDirectory = socketDirectory
        self.tmux = tmux
    }

    public func run(updates: SinkUpdates) async throws {
        // Updates, changes of the socket folder and timers (a minute of
        // `{duration}`, a retry) meet in one sequential loop, so two pushes to the
        // same server never race (a late older value can never overwrite a newer one).
        let latest = NewestUpdate()
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let interval = rescanInterval
        let folder: FolderWatch?
        do {
            folder = try FolderWatch(directory: socketDirectory) { wake.yield() }
        } catch {
            folder = nil
            context.logger.notice("\(socketDirectory): \(error); reading it every \(interval) instead")
        }
        defer { folder?.stop() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates {
                    latest.put(update)
                    wake.yield()
                }
                wake.finish()
            }
            if folder == nil {
                group.addTask {
                    while (try? await Task.sleep(for: interval)) != nil { wake.yield() }
                }
            }
            var pusher = Pusher(sink: self)
            // Wakes the loop when `{duration}` next changes or a server is due to
            // be tried again; replaced after every turn.
            var timer: Task<Void, Never>?
            for await _ in wakes {
                onTurn?()
                let update = latest.take()
                await pusher.step(update)
                timer?.cancel()
                timer = [pusher.refreshDelay(), pusher.retryDelay()].compactMap { $0 }.min().map { delay in
                    Task { if (try? await Task.sleep(for: delay)) != nil { wake.yield() } }
                }
            }
            timer?.cancel()
            group.cancelAll()
        }
        // The daemon is stopping (or reloading, and the next sink sets it again at
        // once): a status line must not go on showing a state nobody keeps true.
        // An unstructured task, because this one is cancelled by the shutdown.
        let sink = self
        await Task { await Pusher.clear(sink: sink) }.value
    }
}
