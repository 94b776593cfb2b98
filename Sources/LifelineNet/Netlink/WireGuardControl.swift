import CNetlink
import Glibc
import LifelineCore
import LifelinePlatform

/// What WireGuard says of a tunnel's first peer, through the userspace
/// implementation's control socket (`/var/run/wireguard/<interface>.sock`,
/// the `get=1` request of its cross-platform interface). Only root may open
/// that socket, as only an administrator may ask the kernel's WireGuard
/// (generic netlink, `WG_CMD_GET_DEVICE`, not read here): a daemon that
/// cannot read it goes by the routes and the tunnel's counters instead.
public struct WireGuardState: Sendable, Equatable {
    /// The peer's address ("10.0.0.1", "2001:db8::1"), without its port.
    public var endpoint: String?
    /// Seconds since the Unix epoch of the last completed handshake; 0: never.
    public var lastHandshake: Int64 = 0
    public var rxBytes: UInt64 = 0
    public var txBytes: UInt64 = 0
    /// The mark the tunnel's own datagrams carry (policy routing); 0: none.
    public var fwmark: UInt32 = 0

    /// A session key lives 180 s at most (WireGuard's reject-after time); a
    /// peer that answers renews it every 120 s while traffic flows. A
    /// handshake older than that, with a margin, is a peer that stopped answering.
    public static let silentAfter: Int64 = 180 + 20

    /// Whether the handshake is too old, or never happened, at `now` (seconds since the epoch).
    public func handshakeIsStale(now: Int64) -> Bool {
        lastHandshake == 0 || now - lastHandshake > Self.silentAfter
    }

    /// Parses the answer to `get=1`: device keys, then one block per peer
    /// starting at `public_key=`. The first peer's values are kept.
    public static func parse(_ text: String) -> WireGuardState? {
        var state = WireGuardState()
        var peers = 0
        var sawErrno = false
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals], value = line[line.index(after: equals)...]
            switch key {
            case "public_key": peers += 1
            case "fwmark" where peers == 0: state.fwmark = UInt32(value) ?? 0
            case "endpoint" where peers == 1: state.endpoint = Self.host(String(value))
            case "last_handshake_time_sec" where peers == 1: state.lastHandshake = Int64(value) ?? 0
            case "rx_bytes" where peers == 1: state.rxBytes = UInt64(value) ?? 0
            case "tx_bytes" where peers == 1: state.txBytes = UInt64(value) ?? 0
            case "errno": sawErrno = value == "0"
            default: break
            }
        }
        return sawErrno && peers > 0 ? state : nil
    }

    /// "10.0.0.1:51820" → "10.0.0.1"; "[2001:db8::1]:51820" → "2001:db8::1".
    package static func host(_ endpoint: String) -> String? {
        if endpoint.hasPrefix("["), let close = endpoint.firstIndex(of: "]") {
            return String(endpoint[endpoint.index(after: endpoint.startIndex)..<close])
        }
        guard let colon = endpoint.lastIndex(of: ":") else { return nil }
        return String(endpoint[..<colon])
    }

    /// Asks the userspace implementation's socket for `interface`; nil when
    /// there is none, it is not root's (or ours), or it does not answer within a second.
    public static func read(_ interface: String, folder: String = "/var/run/wireguard") -> WireGuardState? {
        guard !interface.isEmpty, !interface.contains("/") else { return nil }
        let path = "\(folder)/\(interface).sock"
        // Believed only from the socket root (or we) made: anyone else's could say anything.
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK,
              info.st_uid == 0 || info.st_uid == getuid() else { return nil }
        let fd = socket(AF_UNIX, SocketConstants.stream | SocketConstants.closeOnExec, 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("get=1\n\n".utf8)
        guard write(fd, request, request.count) == request.count else { return nil }
        // The answer ends with "errno=N" and an empty line; a device with
        // many peers is long, and nothing past 256 KiB is needed.
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while answer.count < 256 << 10 {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            answer += chunk[0..<n]
            if answer.count >= 2, answer.suffix(2) == [10, 10] { break }
        }
        return parse(String(decoding: answer, as: UTF8.self))
    }
}
