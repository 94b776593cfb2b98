import LifelineCore
import LifelineNet
import LifelinePlatform

/// `netlink` monitor: is there a usable default route? (`offline` when not, and
/// `online` when no probe runs). Learns link, carrier, address and route
/// changes from rtnetlink the moment the kernel makes them; no polling.
///
/// A default route is usable when it is a unicast route in the main table (IPv4
/// or IPv6, plain or multipath) with a next hop whose interface is up and
/// running and not loopback. The primary interface is the one of the usable
/// default route with the lowest metric. Interfaces that never carry the
/// default route (docker, veth, bridges, tun without a route) cannot change the
/// state, whatever their churn: a socket filter (`EventFilter`) has the kernel
/// drop their messages before they wake the daemon.
///
/// Publishes a `.link` observation when the state, interface or kind changes,
/// and asks the probe to check at once after every change that touches the
/// decision. On receive-buffer overflow (ENOBUFS) it re-dumps the kernel tables
/// (at most twice a second) and publishes the exact state after.
///
/// Config keys:
/// - `ignore` (array of interface-name glob patterns, default `["docker*",
///   "veth*", "br-*", "virbr*", "vnet*", "lxcbr*", "cni*", "flannel*", "podman*"]`):
///   only a tie-breaker between default routes of equal metric; an ignored
///   interface that carries the only default route still counts.
/// - `receive_buffer` (integer, bytes, default 0 = the kernel default): the
///   event socket's receive buffer. For tests that force an overflow.
/// - `networkd_links` (string, default `"/run/systemd/netif/links"`): the
///   folder of systemd-networkd's link state files, whose `CAPTIVE_PORTAL=`
///   line names the captive-portal API a network announced; watched, never
///   polled. `""` reads none.
/// - `announcement_lifetime` (duration, default `"30m"`, RFC 4861's default
///   router lifetime): how long a Router Advertisement's captive-portal
///   option stands after the last RA that carried it.
///
/// The captive-portal API announced on the primary interface (an RA's option
/// 37, which the kernel passes to any listener on `RTNLGRP_ND_USEROPT`, or
/// networkd's link state) rides on the link observation; the probe asks it.
public struct NetlinkMonitor: Monitor {
    public struct Config: ConfigSection, Equatable {
        public static var defaults: Self { Self() }
        public static let defaultIgnore = [
            "docker*", "veth*", "br-*", "virbr*", "vnet*", "lxcbr*", "cni*", "flannel*", "podman*",
        ]
        public var ignore: [String] = Self.defaultIgnore
        /// Bytes; 0 keeps the kernel's default.
        public var receiveBuffer: Int = 0
        public var networkdLinks = "/run/systemd/netif/links"
        public var announcementLifetime = ConfigDuration.seconds(1800)

        enum CodingKeys: String, CodingKey {
            case ignore
            case receiveBuffer = "receive_buffer"
            case networkdLinks = "networkd_links"
            case announcementLifetime = "announcement_lifetime"
        }

        public func validate() throws(ConfigValueError) {
            if ignore.contains(where: \.isEmpty) {
                throw ConfigValueError(key: "ignore", "patterns must not be empty")
            }
            try require("receive_buffer", receiveBuffer, in: 0...(1 << 30), unit: "bytes")
            try require("announcement_lifetime", announcementLifetime, in: .seconds(1)...(.seconds(86400)))
            guard networkdLinks.isEmpty || networkdLinks.hasPrefix("/") else {
                throw ConfigValueError(key: "networkd_links", "must be an absolute path or \"\", got '\(networkdLinks)'")
            }
        }
    }

    public static let kind = "netlink"
    public static let summary = "Watches links, addresses and routes (rtnetlink) for a usable default route."

    let config: Config
    let context: PluginContext
    /// Where interface kinds are read from; tests point it at a fake tree.
    var sysfsRoot = "/sys/class/net"

    public init(config: Config, context: PluginContext) throws {
        self.config = config
        self.context = context
    }

    struct Stopped: Error, CustomStringConvertible {
        var description: String
    }

    public func run(handle: MonitorHandle) async throws {
        let settings = NetlinkLoop.Settings(
            receiveBuffer: config.receiveBuffer > 0 ? config.receiveBuffer : nil,
            deprioritised: NamePatterns(patterns: config.ignore),
            kinds: InterfaceKinds(sysfsRoot: sysfsRoot),
            announcementLifetime: config.announcementLifetime.duration
        )
        let loop = try NetlinkLoop(settings: settings, logger: context.logger)
        var networkd: FolderWatch?
        if !config.networkdLinks.isEmpty {
            let folder = config.networkdLinks
            do {
                networkd = try FolderWatch(directory: folder) {
                    loop.networkd(NetworkdLinks.read(folder: folder))
                }
            } catch {
                context.logger.info("netlink: not watching \(folder) for captive-portal announcements: \(error)")
            }
        }
        defer { networkd?.stop() }
        let thread = SerialThread(name: "netlink")
        defer { thread.stop() }
        // The loop's thread publishes straight into the bus (thread-safe, never
        // blocks): a kernel event reaches the decision without a hop through the
        // task pool. Only the loop's end comes back here.
        let failure: String?
        do {
            failure = try await withTaskCancellationHandler {
                try await thread.run { () -> String? in
                    var failure: String?
                    loop.run { event in
                        switch event {
                        case .update(let observation, let check):
                            if let observation { handle.publish(observation) }
                            if check { handle.requestCheck() }
                        case .failed(let message):
                            failure = message
                        }
                    }
                    return failure
                }
            } onCancel: {
                loop.stop()
            }
        } catch {
            return  // cancelled: the loop is told to stop and ends on its thread
        }
        if let failure { throw Stopped(description: failure) }
    }
}
