import LifelineCore
import Logging
import Synchronization

/// Runs one plugin and restarts it after a back-off when it fails or stops on
/// its own (i3status-rust's `error_interval`). The back-off doubles from
/// `initial` to `maximum` and resets once the plugin has run for `maximum`
/// without failing. Cancellation ends it; so does the plugin throwing
/// `CancellationError` (a sink whose mailbox was closed for good) or
/// `PluginFatalError`, which is rethrown for the daemon to exit with.
///
/// A plugin failing the same way on every restart (no session bus on a headless
/// machine, a tool that is not installed) is reported once: the same failure
/// again is logged at debug level only, and its recovery (a run as long as the
/// back-off's maximum) is reported once too.
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
        /// The failure last reported, while the plugin keeps failing that way.
        var repeating: String?
        while !Task.isCancelled {
            let started = time.now()
            let recovery = repeating.map { announceRecovery(after: $0, startedAt: started) }
            defer { recovery?.cancel() }
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
            recovery?.cancel()
            if started.duration(to: time.now()) >= backoff.maximum {
                delay = backoff.initial
                repeating = nil
            }
            if why == repeating {
                logger.debug("\(name) \(why) again; restarting in \(DurationText.format(delay))")
            } else {
                logger.error("\(name) \(why); restarting in \(DurationText.format(delay))")
                repeating = why
            }
            backingOff.set(true)
            defer { backingOff.set(false) }
            do { try await time.sleep(time.now().advanced(by: delay)) } catch { return }
            delay = min(delay * 2, backoff.maximum)
            attempt += 1
        }
    }

    /// Says once that a plugin which kept failing has now run for the back-off's
    /// maximum, the span after which the supervisor counts it as healthy again.
    private func announceRecovery(after failure: String, startedAt started: Moment) -> Task<Void, Never> {
        Task { [time, backoff, logger, name] in
            do { try await time.sleep(started.advanced(by: backoff.maximum)) } catch { return }
            logger.notice("\(name) is running again (it had \(failure))")
        }
    }
}
