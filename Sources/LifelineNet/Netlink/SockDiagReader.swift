import CNetlink
import Glibc
import LifelineCore

/// Reads the established TCP connections of this network namespace once, with
/// the kernel's `tcp_info` for each (as `ss -ti` does), and keeps those that
/// leave through the primary interface. Any user may read them; nothing is
/// sent on the network. Blocking and bounded like `GatewayReader`: a fresh
/// socket per read, each reply waited for a second at most, and a dump larger
/// than `byteLimit` is an error, never a guess.
package enum SockDiagReader {
    package struct Reading: Sendable {
        /// The primary interface's connections (see `PrimaryTraffic`).
        package var connections: [TCPConnection]
        /// Every established connection the kernel listed, before the filter.
        package var seen: Int
        package var problems: [String]
    }

    /// About 3,000 connections' worth per family: far more than a desktop has open.
    package static let byteLimit = 1 << 20

    /// The connections through `interface`; an unknown interface has none.
    package static func read(interface: String) throws(GatewayReader.Failure) -> Reading {
        let index = Int32(bitPattern: if_nametoindex(interface))
        guard index > 0 else { return Reading(connections: [], seen: 0, problems: []) }
        let addresses = try self.addresses()
        var all = try connections()
        let seen = all.connections.count
        let traffic = PrimaryTraffic(addresses: addresses.messages, primary: index)
        all.connections.removeAll { !traffic.carries($0) }
        return Reading(connections: all.connections, seen: seen, problems: addresses.problems + all.problems)
    }

    /// Every interface's addresses, which say what is local (rtnetlink, one dump).
    static func addresses() throws(GatewayReader.Failure) -> (messages: [AddressMessage], problems: [String]) {
        let socket: NetlinkSocket
        do { socket = try NetlinkSocket(groups: 0, nonBlocking: true) } catch { throw .init(description: "\(error)") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        let dump = try GatewayReader.dump(LL_RTM_GETADDR, on: socket, buffer: buffer)
        let messages = dump.messages.compactMap { m -> AddressMessage? in
            if case .newAddress(let a) = m.body { return a }
            return nil
        }
        return (messages, dump.problems)
    }

    /// Every established TCP connection, IPv4 then IPv6, before any filter.
    package static func connections() throws(GatewayReader.Failure) -> (connections: [TCPConnection], problems: [String]) {
        let socket: NetlinkSocket
        do {
            socket = try NetlinkSocket(groups: 0, nonBlocking: true, family: LL_NETLINK_SOCK_DIAG)
        } catch { throw .init(description: "\(error)") }
        // The kernel fills a datagram up to its page-sized buffer; 64 KiB holds any.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var connections: [TCPConnection] = []
        var problems: [String] = []
        for family: UInt8 in [2, 10] {
            let sequence: UInt32
            do {
                sequence = try socket.requestDump(type: LL_SOCK_DIAG_BY_FAMILY, body: SockDiagParser.request(family: family))
            } catch { throw .init(description: "\(error)") }
            var received = 0
            dump: while true {
                guard socket.waitReadable(timeoutMs: 1000) else {
                    throw .init(description: "the kernel listed no TCP sockets within 1 s")
                }
                let count: Int
                do {
                    switch try socket.receive(into: buffer) {
                    case .wouldBlock, .foreign: continue
                    case .overflow: throw GatewayReader.Failure(description: "the TCP socket list overflowed")
                    case .truncated(let n): throw GatewayReader.Failure(description: "a TCP socket list datagram of \(n) bytes")
                    case .data(let n): count = n
                    }
                } catch let error as GatewayReader.Failure {
                    throw error
                } catch { throw .init(description: "\(error)") }
                received += count
                guard received <= byteLimit else {
                    throw .init(description: "the TCP socket list is larger than \(byteLimit >> 20) MiB: not read")
                }
                let result = SockDiagParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), sequence: sequence)
                problems += result.problems.map { "TCP socket list: \($0)" }
                connections += result.connections
                if let code = result.error {
                    // A kernel without IPv6 has no IPv6 sockets to list.
                    if code == -ENOENT || code == -EAFNOSUPPORT { break dump }
                    throw .init(description: "reading the TCP socket list: \(String(cString: strerror(0 &- code)))")
                }
                if result.done { break dump }
            }
        }
        return (connections, problems)
    }
}

/// Which connections are the user's traffic through the primary interface:
/// those whose local address is one of its addresses (the kernel takes the
/// source from the interface a route leaves by), to a remote address that is
/// on none of the machine's own subnets, nor loopback or link-local. Local
/// traffic (a NAS, a printer, a container) says nothing about the internet.
package struct PrimaryTraffic: Sendable {
    private var primary: [[UInt8]] = []
    private var subnets: [(bytes: [UInt8], prefix: Int)] = []

    package init(addresses: [AddressMessage], primary index: Int32) {
        for a in addresses where a.address.count == 4 || a.address.count == 16 {
            if a.index == index { primary.append(a.address) }
            subnets.append((a.address, Int(a.prefixLength)))
        }
    }

    package func carries(_ c: TCPConnection) -> Bool {
        guard let source = Self.plain(c.source), let destination = Self.plain(c.destination),
              primary.contains(source), !Self.isLoopbackOrLinkLocal(destination)
        else { return false }
        return !subnets.contains { Self.within(destination, $0.bytes, prefix: $0.prefix) }
    }

    /// An IPv4-mapped IPv6 address (a dual-stack socket's IPv4 peer) as IPv4.
    static func plain(_ a: [UInt8]) -> [UInt8]? {
        switch a.count {
        case 4: return a
        case 16 where a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xFF && a[11] == 0xFF: return Array(a[12...])
        case 16: return a
        default: return nil
        }
    }

    static func isLoopbackOrLinkLocal(_ a: [UInt8]) -> Bool {
        if a.count == 4 { return a[0] == 127 || (a[0] == 169 && a[1] == 254) || a.allSatisfy { $0 == 0 } }
        let loopback = a[0..<15].allSatisfy { $0 == 0 } && a[15] == 1
        return loopback || (a[0] == 0xFE && a[1] & 0xC0 == 0x80)
    }

    static func within(_ a: [UInt8], _ net: [UInt8], prefix: Int) -> Bool {
        guard a.count == net.count else { return false }
        let bits = min(max(prefix, 0), a.count * 8)
        for i in 0..<(bits / 8) where a[i] != net[i] { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << UInt8(8 - rest)
        return a[bits / 8] & mask == net[bits / 8] & mask
    }
}

extension TCPConnection {
    /// The connection as the quality estimator counts it; nil without the
    /// counters it needs (a kernel before Linux 4.2 has no segment counts).
    package var flowSample: FlowSample? {
        guard let info, let out = info.segmentsOut, let received = info.segmentsIn else { return nil }
        var flow = FlowSample(id: cookie, remote: destination, rttMicros: info.rttMicros,
                              retransmits: info.totalRetransmits, segmentsOut: out, segmentsIn: received)
        flow.minRttMicros = info.minRttMicros ?? 0
        return flow
    }
}
