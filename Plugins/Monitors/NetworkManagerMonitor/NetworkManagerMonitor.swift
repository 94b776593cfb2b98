import Glibc
import LifelineCore
import LifelineDBus
import LifelineGLib

/// `networkmanager` monitor: what NetworkManager knows that the kernel cannot
/// tell, from `org.freedesktop.NetworkManager` on the system bus: its `State`,
/// `Connectivity`, `Metered` and the primary connection (`Id`, `Type`, its
/// device's `Interface`, the captive-portal API its DHCP options announce).
/// Event-driven (`PropertiesChanged`), no polling.
///
/// Costs nothing where NetworkManager is absent: without it on the bus the
/// monitor waits for `NameOwnerChanged`; without a system bus at all it says so
/// once (info) and waits for the bus's socket to be created (inotify, no
/// timer); a bus whose socket is there but does not answer is tried again after
/// a growing pause (up to `retry`). It never speaks for a NetworkManager that
/// is gone: its observations then say `unknown`.
///
/// A check request (route change, "Check now", D-Bus `Check()`) also asks
/// NetworkManager to `CheckConnectivity()` when its own checking is enabled.
///
/// Config keys:
/// - `retry` (duration, default `"60s"`): the longest pause between attempts
///   to reach a system bus that does not answer.
public struct NetworkManagerMonitor: Monitor {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public var retry = ConfigDuration.seconds(60)

        enum CodingKeys: String, CodingKey {
            case retry
        }

        public func validate() throws(ConfigValueError) {
            try require("retry", retry, in: .seconds(1)...(.seconds(3600)))
        }
    }

    public static let kind = "networkmanager"
    public static let summary = "Follows NetworkManager on the system bus: state, connectivity, metered, the connection's name and kind."

    let config: Config
    let context: PluginContext

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    public func run(handle: MonitorHandle) async throws {
        let client = NetworkManagerClient(handle: handle, logger: context.logger)
        let requests = handle.checkRequests()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in requests { await client.checkConnectivity() }
            }
            group.addTask { await self.keepFollowing(client) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Connects to the system bus and follows NetworkManager there, again and
    /// again: a bus that goes away (or never was) is waited for, quietly.
    private func keepFollowing(_ client: NetworkManagerClient) async {
        let loop = MainLoopThread.systemBus
        var pause = Duration.seconds(1)
        var saidSo = false
        while !Task.isCancelled {
            let address = SystemBus.address()
            do {
                let connection = try await SystemBus.open(address)
                if saidSo { context.logger.info("the system bus is here: following NetworkManager") }
                saidSo = false
                pause = .seconds(1)
                try await client.follow(connection, on: loop)
                if Task.isCancelled { return }
                context.logger.info("lost the system bus; following NetworkManager again once it is back")
            } catch {
                if !saidSo {
                    context.logger.info("no system bus at \(address) (\(error)); NetworkManager is not followed until it appears")
                    saidSo = true
                }
            }
            let appeared = await SystemBus.waitBeforeRetrying(address, pause: pause)
            pause = appeared ? .seconds(1) : min(pause * 2, config.retry.duration)
        }
    }
}
