import LifelineCore

/// `dbus` sink: keeps the daemon's `org.lifeline.Lifeline1` object current.
///
/// The object, the bus name and the methods (`Check()`, `GetStatus()`,
/// `Mute()`, the jobs of `lifeline run`) are the daemon's session-bus service,
/// which runs whatever sinks the config lists: the name is the daemon's
/// single-instance lock. This sink carries the published states to it: every
/// transition is one `StateChanged`, in order; attribute-only updates change
/// properties but emit no `StateChanged`. The interface is `Lifeline1` in
/// LifelineDBus and `packaging/dbus/org.lifeline.Lifeline1.xml`.
///
/// Config keys:
/// - `check_timeout` (duration, default `"10s"`): how long `Check()` waits for
///   the probe's answer before returning the current state.
public struct DBusSink: Sink {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var checkTimeout = ConfigDuration.seconds(10)

        enum CodingKeys: String, CodingKey {
            case checkTimeout = "check_timeout"
        }

        public func validate() throws(ConfigValueError) {
            try require("check_timeout", checkTimeout, in: .milliseconds(1)...(.seconds(120)))
        }
    }

    public static let kind = "dbus"
    public static let summary = "Publishes the state on org.lifeline.Lifeline1 (session bus): properties and StateChanged."
    /// Every transition becomes a `StateChanged`: subscribers see each one, in order.
    public static let delivery = DeliveryPolicy.everyTransition(capacity: 1024)

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public func run(updates: SinkUpdates) async throws {
        guard let object = context.services.sessionBus else {
            context.logger.warning("no session-bus service runs in this process; the dbus sink has nothing to publish to")
            for await _ in updates {}
            return
        }
        object.setCheckTimeout(config.checkTimeout.duration)
        for await update in updates { object.publish(update) }
    }
}
