import Glibc
import LifelineCore
import LifelinePlatform

/// The socket side of the probe's own client: a non-blocking connect whose
/// wait is bounded by a deadline and ends when the task is cancelled, and the
/// binding to an interface as libcurl's `CURLOPT_INTERFACE` does it with a name.
package enum PlainHTTPSocket {
    package enum ConnectFailure: Error, Equatable {
        case failed(errno: Int32)
        /// Bound to an interface that has no address of this family.
        case interface(String)
        case timedOut, cancelled
    }

    /// A connected, non-blocking TCP socket to `address`, bound to `interface`
    /// when one is named, within `deadline`.
    package static func connect(to address: SocketAddress, interface: String, until deadline: ContinuousClock.Instant,
                        waiter: any DescriptorWaiter) async -> Result<Int32, ConnectFailure> {
        let fd = socket(address.family, SocketConstants.stream | SocketConstants.nonBlocking | SocketConstants.closeOnExec, 0)
        guard fd >= 0 else { return .failure(.failed(errno: errno)) }
        func fail(_ failure: ConnectFailure) -> Result<Int32, ConnectFailure> {
            close(fd)
            return .failure(failure)
        }
        if !interface.isEmpty, let failure = bind(fd, to: interface, family: address.family) { return fail(failure) }
        let started = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if started != 0 {
            guard errno == EINPROGRESS else { return fail(.failed(errno: errno)) }
            switch await waiter.wait(for: fd, events: Int16(POLLOUT), until: deadline) {
            case .timedOut: return fail(.timedOut)
            case .cancelled: return fail(.cancelled)
            case .ready: break
            }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 { error = errno }
            if error != 0 { return fail(.failed(errno: error)) }
        }
        return .success(fd)
    }

    /// As libcurl binds to an interface given by name: `SO_BINDTODEVICE`,
    /// and where that is not permitted (it wants CAP_NET_RAW) the
    /// interface's first address of the socket's family (an IPv6 one not
    /// link-local), port 0.
    package static func bind(_ fd: Int32, to interface: String, family: Int32) -> ConnectFailure? {
        let bound = interface.withCString { name in
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
        }
        if bound == 0 { return nil }
        guard var address = firstAddress(of: interface, family: family) else {
            return .interface("Couldn't bind to '\(interface)'")
        }
        if family == AF_INET6 {
            address.storage.withUnsafeMutableBytes(as: sockaddr_in6.self) { $0.sin6_port = 0 }
        } else {
            address.storage.withUnsafeMutableBytes(as: sockaddr_in.self) { $0.sin_port = 0 }
        }
        let result = address.withSockaddr { Glibc.bind(fd, $0, $1) }
        return result == 0 ? nil : .interface("bind failed with errno \(errno): \(String(cString: strerror(errno)))")
    }

    package static func firstAddress(of interface: String, family: Int32) -> SocketAddress? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr, Int32(sa.pointee.sa_family) == family,
                  String(cString: entry.pointee.ifa_name) == interface else { continue }
            let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
            let address = SocketAddress(sa, length: length)
            if family == AF_INET6 {
                let linkLocal = address.storage.withUnsafeBytes(as: sockaddr_in6.self) { a in
                    withUnsafeBytes(of: a.sin6_addr) { $0[0] == 0xFE && $0[1] & 0xC0 == 0x80 }
                }
                if linkLocal { continue }
            }
            return address
        }
        return nil
    }
}

extension sockaddr_storage {
    /// The storage seen as the family's own address type.
    package mutating func withUnsafeMutableBytes<T, R>(as type: T.Type, _ body: (inout T) -> R) -> R {
        Swift.withUnsafeMutableBytes(of: &self) { raw in body(&raw.baseAddress!.assumingMemoryBound(to: T.self).pointee) }
    }

    package func withUnsafeBytes<T, R>(as type: T.Type, _ body: (T) -> R) -> R {
        Swift.withUnsafeBytes(of: self) { raw in body(raw.load(as: T.self)) }
    }
}
