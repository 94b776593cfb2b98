import LifelineCore
import LifelineDaemon
import Logging
import NetlinkMonitor
import ProbeMonitor

/// The answer without a daemon: one dump of the kernel's routes and, when there
/// is a default route, one HTTP check with the probe settings of the user's
/// config (or the defaults). No debounce and no second probe: it is one look.
enum LocalCheck {
    struct Answer {
        var state: ConnectivityState
        var reason: String
    }

    static func run(logger: Logger) async -> Answer {
        var netlink = NetlinkMonitor.Config.defaults
        var probe: ProbeMonitor.Config? = .defaults
        do {
            let config = try ConfigLoader.load(explicitPath: nil, paths: .fromEnvironment())
            netlink = config.monitors.lazy.compactMap { $0.config as? NetlinkMonitor.Config }.first ?? netlink
            // A config without a probe decides on the route alone, as the daemon would.
            probe = config.monitors.lazy.compactMap { $0.config as? ProbeMonitor.Config }.first
        } catch {
            printError("ignoring the config (\(error)); checking with the default settings")
        }
        let link: Observation
        do {
            link = try NetlinkMonitor.snapshot(config: netlink, logger: logger)
        } catch {
            return Answer(state: .offline, reason: "cannot read the routes: \(error)")
        }
        guard link.state == .online, let probe else { return Answer(state: link.state, reason: link.reason) }
        let reach = await ProbeMonitor.probeOnce(config: probe, interface: link.interface)
        return Answer(state: reach.state, reason: reach.reason)
    }
}
