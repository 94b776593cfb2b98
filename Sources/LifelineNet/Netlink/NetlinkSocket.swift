import CNetlink
import Glibc
import LifelinePlatform

/// An rtnetlink socket (one `final class` per descriptor, closed in `deinit`).
/// The monitor uses two: a non-blocking one subscribed to the multicast
/// groups, and one for dumps, so a dump's replies never interleave with events.
package final class NetlinkSocket: @unchecked Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package init(operation: String, errno: Int32) {
            self.operation = operation
            self.errno = errno
        }
        package var operation: String
        package var errno: Int32
        package var description: String { "netlink \(operation): \(String(cString: strerror(errno)))" }
    }

    package let fd: Int32
    private var sequence: UInt32 = 0

    /// - Parameters:
    ///   - groups: `RTMGRP_*` bits to join (0 for the dump socket).
    ///   - receiveBuffer: bytes for SO_RCVBUF; nil keeps the kernel default.
    ///     SO_RCVBUFFORCE (root) is tried first so a test can force a tiny one.
    ///   - family: the netlink family, rtnetlink unless `NETLINK_SOCK_DIAG`.
    package init(groups: UInt32, nonBlocking: Bool, receiveBuffer: Int? = nil,
                 family: Int32 = LL_NETLINK_ROUTE) throws(Failure) {
        var type = SocketConstants.raw | SocketConstants.closeOnExec
        if nonBlocking { type |= SocketConstants.nonBlocking }
        fd = socket(LL_AF_NETLINK, type, family)
        guard fd >= 0 else { throw Failure(operation: "socket", errno: errno) }
        if let size = receiveBuffer {
            var value = Int32(clamping: size)
            let length = socklen_t(MemoryLayout<Int32>.size)
            if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &value, length) != 0,
               setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, length) != 0 {
                let e = errno
                close(fd)
                throw Failure(operation: "SO_RCVBUF \(size)", errno: e)
            }
        }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(LL_AF_NETLINK)
        address.nl_groups = groups
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let e = errno
            close(fd)
            throw Failure(operation: "bind", errno: e)
        }
    }

    /// Joins one more multicast group, by number (`RTNLGRP_*`): for groups
    /// above 32, which have no bit in `nl_groups`.
    package func join(group: Int32) throws(Failure) {
        var value = group
        guard setsockopt(fd, LL_SOL_NETLINK, LL_NETLINK_ADD_MEMBERSHIP, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw Failure(operation: "join group \(group)", errno: errno)
        }
    }

    deinit { close(fd) }

    package enum Receive {
        case data(Int)
        case wouldBlock
        /// ENOBUFS: the kernel dropped messages for us. Our state is stale.
        case overflow
        /// A datagram longer than the buffer (MSG_TRUNC): also lost data.
        case truncated(Int)
        /// Not from the kernel (port id ≠ 0): dropped.
        case foreign(UInt32)
    }

    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Receive {
        while true {
            var from = sockaddr_nl()
            var fromLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
            let n = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, buffer.baseAddress, buffer.count, SocketConstants.truncate, $0, &fromLength)
                }
            }
            if n < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .wouldBlock
                case ENOBUFS: return .overflow
                default: throw Failure(operation: "recv", errno: errno)
                }
            }
            if n > buffer.count { return .truncated(n) }
            if from.nl_pid != 0 { return .foreign(from.nl_pid) }
            return .data(n)
        }
    }

    /// Sends a dump request (`RTM_GET*` with NLM_F_DUMP) and returns its sequence number.
    package func requestDump(type: UInt16) throws(Failure) -> UInt32 {
        // nlmsghdr (16) + rtgenmsg (1), padded to 4: the kernel accepts rtgenmsg
        // for every RTM_GET* dump and AF_UNSPEC means all families.
        let body = [UInt8](repeating: 0, count: Int(ll_nlmsg_align(LL_NLMSG_HDRLEN + LL_SIZEOF_RTGENMSG) - LL_NLMSG_HDRLEN))
        return try send(type: type, flags: LL_NLM_F_REQUEST | LL_NLM_F_DUMP, body: body, operation: "send dump request")
    }

    /// Sends one request (`type`, `NLM_F_REQUEST`, `body` after the header) and
    /// returns its sequence number: a single route lookup, not a dump.
    package func request(type: UInt16, body: [UInt8]) throws(Failure) -> UInt32 {
        try send(type: type, flags: LL_NLM_F_REQUEST, body: body, operation: "send request")
    }

    /// Sends a dump request whose body the caller built (a sock_diag query).
    package func requestDump(type: UInt16, body: [UInt8]) throws(Failure) -> UInt32 {
        try send(type: type, flags: LL_NLM_F_REQUEST | LL_NLM_F_DUMP, body: body, operation: "send dump request")
    }

    /// One message to the kernel: the header, then `body`; returns its sequence number.
    private func send(type: UInt16, flags: UInt16, body: [UInt8], operation: String) throws(Failure) -> UInt32 {
        sequence &+= 1
        var message = [UInt8](repeating: 0, count: Int(LL_NLMSG_HDRLEN)) + body
        let length = UInt32(message.count)
        let seq = sequence
        message.withUnsafeMutableBytes { b in
            b.storeBytes(of: length, toByteOffset: 0, as: UInt32.self)
            b.storeBytes(of: type, toByteOffset: 4, as: UInt16.self)
            b.storeBytes(of: flags, toByteOffset: 6, as: UInt16.self)
            b.storeBytes(of: seq, toByteOffset: 8, as: UInt32.self)
        }
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(LL_AF_NETLINK)
        let sent = message.withUnsafeBytes { b in
            withUnsafePointer(to: &kernel) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
        guard sent == message.count else { throw Failure(operation: operation, errno: errno) }
        return seq
    }

    /// Waits up to `timeoutMs` for the socket to be readable.
    package func waitReadable(timeoutMs: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let r = poll(&p, 1, timeoutMs)
            if r < 0, errno == EINTR { continue }
            return r > 0
        }
    }
}

/// An eventfd that wakes the poll loop (cancellation).
package final class Wakeup: @unchecked Sendable {
    package let fd: Int32

    package init() throws(NetlinkSocket.Failure) {
        fd = ll_eventfd()
        guard fd >= 0 else { throw NetlinkSocket.Failure(operation: "eventfd", errno: errno) }
    }

    deinit { close(fd) }

    package func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}
