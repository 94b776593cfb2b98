import LifelineCore
import Logging
import Synchronization

/// Runs one plugin and restarts it after a back-off when it fails or stops on
/// its own (i3status-rust's `error_interval`). The back-off doubles from
/// `initial` to `maximum` and resets once the plugin has run for `maximum`
/// without failing. Cancellation ends it; so does the plugin throwing
/// `CancellationError` (a sink whose mailbox was closed for good) or
/// `PluginFatalError`, which is rethrown for the daemon to exit with.
struct Supervised: Sendable {
    struct Backoff: Sendable {
        var initial: Duration
        var maximum: Duration
        init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
            self.initial = initial
            self.maximum = maximum
        }
    }

    let name: String
    let logger: Logger
    var backoff = Backoff()
    /// Injected so tests can run the back-off on a test clock.
    var time = TimeSource(ContinuousClock())
    /// Receives the attempt number (0 for the first run).
    let body: @Sendable (_ attempt: Int) async throws -> Void
    /// Whether it is waiting out a back-off now (the plugin is not running):
    /// a sink being stopped then has nothing left to write and is cancelled.
    let backingOff = BackingOff()

    final class BackingOff: Sendable {
        private let flag = Atomic<Bool>(false)
        var now: Bool { flag.load(ordering: .acquiring) }
        func set(_ value: Bool) { flag.store(value, ordering: .releasing) }
    }

    func run() async throws {
        var delay = backoff.initial
        var attempt = 0
        while !Task.isCancelled {
            let started = time.now()
            let why: String
            do {
                try await body(attempt)
                if Task.isCancelled { return }
                why = "stopped"
            } catch is CancellationError {
                return
            } catch let fatal as PluginFatalError {
                throw fatal
            } catch {
                if Task.isCancelled { return }
                why = "failed: \(error)"
            }
            if started.duration(to: time.now()) >= backoff.maximum { delay = backoff.initial }
            logger.error("\(name) \(why); restarting in \(DurationText.format(delay))")
            backingOff.set(true)
            defer { backingOff.set(false) }
            do { try await time.sleep(time.now().advanced(by: delay)) } catch { return }
            delay = min(delay * 2, backoff.maximum)
            attempt += 1
        }
    }
}
