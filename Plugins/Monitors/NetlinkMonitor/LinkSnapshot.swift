import LifelineCore
import LifelineNet
import Logging

extension NetlinkMonitor {
    /// What one dump of the kernel's links, addresses and routes says, for a
    /// one-off answer without a daemon (`lifeline wait-online`, `run`): the same
    /// decision the monitor publishes first, then nothing is followed.
    public static func snapshot(config: Config = .defaults, logger: Logger) throws -> Observation {
        let settings = NetlinkLoop.Settings(
            receiveBuffer: nil,
            deprioritised: NamePatterns(patterns: config.ignore),
            kinds: InterfaceKinds(sysfsRoot: "/sys/class/net")
        )
        let loop = try NetlinkLoop(settings: settings, logger: logger)
        var result: Result<Observation, Stopped> = .failure(Stopped(description: "netlink: no verdict"))
        loop.run { event in
            switch event {
            case .update(let observation?, _):
                result = .success(observation)
            case .failed(let why):
                result = .failure(Stopped(description: why))
            case .update(nil, _):
                return
            }
            // The first verdict is all a snapshot needs: `run` returns at its next wait.
            loop.stop()
        }
        return try result.get()
    }
}
