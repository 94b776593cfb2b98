import Logging
import ServiceLifecycle

/// Runs one plugin as a `Service` and restarts it after a back-off when it fails
/// or stops on its own (STYLE 6). The back-off doubles from `initial` to `maximum`
/// and resets once the plugin has run for `maximum` without failing.
public struct Supervised: Service {
    public struct Backoff: Sendable {
        public var initial: Duration
        public var maximum: Duration
        public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
            self.initial = initial
            self.maximum = maximum
        }
    }

    public let name: String
    private let logger: Logger
    private let backoff: Backoff
    private let body: @Sendable (_ attempt: Int) async throws -> Void

    /// `body` receives the attempt number (0 for the first run).
    public init(
        name: String, logger: Logger, backoff: Backoff = Backoff(),
        body: @escaping @Sendable (_ attempt: Int) async throws -> Void
    ) {
        self.name = name
        self.logger = logger
        self.backoff = backoff
        self.body = body
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await supervise()
        }
    }

    private func supervise() async throws {
        let clock = ContinuousClock()
        var delay = backoff.initial
        var attempt = 0
        while !Task.isCancelled {
            let started = clock.now
            let why: String
            do {
                try await body(attempt)
                if Task.isCancelled { return }
                why = "stopped"
            } catch is CancellationError {
                return
            } catch let fatal as PluginFatalError {
                // Not restarted: the daemon stops with the plugin's exit code.
                throw fatal
            } catch {
                if Task.isCancelled { return }
                why = "failed: \(error)"
            }
            if started.duration(to: clock.now) >= backoff.maximum { delay = backoff.initial }
            logger.error("\(name) \(why); restarting in \(DurationText.format(delay))")
            // Shutdown during the back-off is a normal end, not a failure.
            do { try await Task.sleep(for: delay) } catch { return }
            delay = min(delay * 2, backoff.maximum)
            attempt += 1
        }
    }
}
