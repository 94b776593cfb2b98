import CEpoll
import Glibc
import LifelineCore
import LifelinePlatform
import Synchronization

/// One socket address as `connect` takes it.
package struct SocketAddress: Sendable {
    package var storage: sockaddr_storage
    package var length: socklen_t
    package var family: Int32 { Int32(storage.ss_family) }

    /// A numeric IPv4 or IPv6 address with a port; nil when `text` is neither.
    package init?(numeric text: String, port: Int) {
        storage = sockaddr_storage()
        var a4 = sockaddr_in()
        if inet_pton(AF_INET, text, &a4.sin_addr) == 1 {
            a4.sin_family = sa_family_t(AF_INET)
            a4.sin_port = UInt16(port).bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeBytes(of: a4) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            return
        }
        var a6 = sockaddr_in6()
        guard inet_pton(AF_INET6, text, &a6.sin6_addr) == 1 else { return nil }
        a6.sin6_family = sa_family_t(AF_INET6)
        a6.sin6_port = UInt16(port).bigEndian
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        withUnsafeBytes(of: a6) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
    }

    package init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        storage = sockaddr_storage()
        let size = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: size)) }
        self.length = socklen_t(size)
    }

    /// 0.0.0.0 or ::, which a DNS blocker answers for a listed name.
    package var isUnspecified: Bool {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET: raw[4..<8].allSatisfy { $0 == 0 }  // sin_addr
            case AF_INET6: raw[8..<24].allSatisfy { $0 == 0 }  // sin6_addr
            default: false
            }
        }
    }

    package func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }
}

extension PlainHTTPLookup {
    /// Whether a numeric address is 0.0.0.0 or :: (a blocker's answer).
    package static func isUnspecified(_ address: String) -> Bool {
        SocketAddress(numeric: address, port: 0)?.isUnspecified ?? false
    }
}

/// `getaddrinfo` for the probe's own client, waited for at most until a
/// deadline: glibc asks a silent resolver for 10 s (two tries of 5 s) whatever
/// the probe's timeout, so the lookup runs on a detached thread of its own that
/// owns a reference to the answer, as libcurl's threaded resolver does. A
/// lookup the probe stops waiting for ends on its own and frees what it found.
package final class PlainHTTPLookup: @unchecked Sendable {
    // @unchecked: the eventfd is set once in `init` and closed
    // in `deinit`; the answer is behind the mutex.
    package enum Outcome: Sendable {
        case found([SocketAddress])
        /// No such name, or no address of the family asked for: getaddrinfo's words.
        case failed(String)
        /// Only the unspecified address (0.0.0.0 or ::), as DNS blockers answer
        /// a listed name: connecting there reaches this machine itself.
        case blocked(String)
        case timedOut
        case cancelled
    }

    /// More addresses than this are never tried within one probe's timeout.
    package static let addressLimit = 16

    private let name: String
    private let port: Int
    private let family: Int32
    private let answer = Mutex<Outcome?>(nil)
    /// An eventfd the thread signals when the answer is in, which the probe
    /// waits for.
    private let done: Int32

    private init?(name: String, port: Int, family: Int32) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard fd >= 0 else { return nil }
        self.name = name
        self.port = port
        self.family = family
        done = fd
    }

    deinit {
        close(done)
    }

    /// The addresses of `name` (of `family`: AF_UNSPEC, AF_INET or AF_INET6),
    /// waited for until `deadline` or until the task is cancelled.
    package static func resolve(_ name: String, port: Int, family: Int32, deadline: ContinuousClock.Instant,
                        waiter: any DescriptorWaiter) async -> Outcome {
        guard let lookup = PlainHTTPLookup(name: name, port: port, family: family) else {
            return .failed(String(cString: strerror(errno)))
        }
        guard lookup.start() else { return .failed("could not start a thread for the lookup") }
        switch await waiter.wait(for: lookup.done, events: Int16(POLLIN), until: deadline) {
        case .ready: return lookup.answer.withLock { $0 } ?? .timedOut
        case .timedOut: return lookup.answer.withLock { $0 } ?? .timedOut
        case .cancelled: return .cancelled
        }
    }

    /// `resolve` for a caller that may block (the layer walk of `diagnose`):
    /// one `poll` on the same eventfd.
    package static func resolveWaiting(_ name: String, port: Int, family: Int32, deadline: ContinuousClock.Instant) -> Outcome {
        guard let lookup = PlainHTTPLookup(name: name, port: port, family: family) else {
            return .failed(String(cString: strerror(errno)))
        }
        guard lookup.start() else { return .failed("could not start a thread for the lookup") }
        while lookup.answer.withLock({ $0 }) == nil {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { break }
            var p = pollfd(fd: lookup.done, events: Int16(POLLIN), revents: 0)
            let (seconds, attoseconds) = left.components
            _ = poll(&p, 1, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
        }
        return lookup.answer.withLock { $0 } ?? .timedOut
    }

    /// Starts the thread, which holds the lookup until it ends.
    private func start() -> Bool {
        DetachedThread.start { [self] in run() }
    }

    private func run() {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = SocketConstants.stream
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(name, String(port), &hints, &list)
        var outcome: Outcome
        if code == 0 {
            var found: [SocketAddress] = []
            var cursor = list
            while let entry = cursor, found.count < Self.addressLimit {
                if let address = entry.pointee.ai_addr { found.append(SocketAddress(address, length: entry.pointee.ai_addrlen)) }
                cursor = entry.pointee.ai_next
            }
            freeaddrinfo(list)
            let usable = found.filter { !$0.isUnspecified }
            outcome = found.isEmpty ? .failed("no address")
                : usable.isEmpty ? .blocked(found[0].family == AF_INET6 ? "::" : "0.0.0.0")
                : .found(usable)
        } else {
            outcome = .failed(String(cString: gai_strerror(code)))
        }
        answer.withLock { $0 = outcome }
        _ = eventfd_write(done, 1)
    }
}
