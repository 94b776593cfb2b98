import Glibc
import LifelineCore
import LifelinePlatform

/// One GET over plain HTTP with the probe's own client: the name looked up,
/// each address tried in turn, the request written, the reply read. What it
/// returns is what libcurl returned for the same exchange: the same reply
/// fields, and a failure's kind and stage as `FailedLayer` reads them.
package enum PlainHTTPExchange {
    /// libcurl's codes for the same failures, so a failure's description reads the same.
    package enum Code {
        package static let couldNotResolve = 6, couldNotConnect = 7, weirdReply = 8, timedOut = 28
        package static let aborted = 42, interfaceFailed = 45, gotNothing = 52, sendError = 55, recvError = 56
    }

    package static func perform(_ request: HTTPRequest, url: PlainHTTPURL, waiter: any DescriptorWaiter) async -> Result<HTTPReply, HTTPFailure> {
        let start = ContinuousClock.now
        let deadline = start + request.timeout
        let connectDeadline = start + min(request.timeout, request.connectTimeout ?? request.timeout)
        func elapsedMs() -> Int { Int((ContinuousClock.now - start).milliseconds) }
        func failure(_ kind: HTTPFailure.Kind, _ code: Int, _ message: String, _ stage: HTTPFailure.Stage) -> Result<HTTPReply, HTTPFailure> {
            let cancelled = Task.isCancelled
            return .failure(HTTPFailure(url: request.url, code: code, kind: cancelled ? .cancelled : kind,
                                      message: cancelled ? "cancelled" : message, stage: stage))
        }

        // The name.
        let addresses: [SocketAddress]
        if let literal = SocketAddress(numeric: url.host, port: url.port) {
            guard request.family.accepts(literal.family) else {
                return failure(.dns, Code.couldNotResolve, "Could not resolve host: \(url.host)", .resolving)
            }
            addresses = [literal]
        } else {
            switch await PlainHTTPLookup.resolve(url.host, port: url.port, family: request.family.addressFamily,
                                                 deadline: connectDeadline, waiter: waiter) {
            case .found(let found): addresses = found
            case .failed: return failure(.dns, Code.couldNotResolve, "Could not resolve host: \(url.host)", .resolving)
            case .blocked(let address): return failure(.blocked, Code.couldNotResolve, address, .resolving)
            case .timedOut: return failure(.timeout, Code.timedOut, "Resolving timed out after \(elapsedMs()) milliseconds", .resolving)
            case .cancelled: return failure(.cancelled, Code.aborted, "cancelled", .resolving)
            }
        }

        // The connection: each address in turn; one that is not last gets half
        // the time left, so a silent first address leaves time for the next.
        var fd: Int32 = -1
        var lastError: Int32 = ECONNREFUSED
        for (i, address) in addresses.enumerated() {
            let last = i == addresses.count - 1
            let left = connectDeadline - ContinuousClock.now
            let until = last ? connectDeadline : ContinuousClock.now + left / 2
            switch await PlainHTTPSocket.connect(to: address, interface: request.interface, until: until, waiter: waiter) {
            case .success(let connected):
                fd = connected
            case .failure(.failed(let error)):
                lastError = error
                continue
            case .failure(.timedOut):
                if !last { lastError = ETIMEDOUT; continue }
                return failure(.timeout, Code.timedOut, "Connection timed out after \(elapsedMs()) milliseconds", .connecting)
            case .failure(.cancelled):
                return failure(.cancelled, Code.aborted, "cancelled", .connecting)
            case .failure(.interface(let why)):
                return failure(.other, Code.interfaceFailed, why, .connecting)
            }
            break
        }
        guard fd >= 0 else {
            if lastError == ETIMEDOUT {
                return failure(.timeout, Code.timedOut, "Connection timed out after \(elapsedMs()) milliseconds", .connecting)
            }
            let kind: HTTPFailure.Kind = lastError == EHOSTUNREACH || lastError == ENETUNREACH ? .unreachable : .refused
            let why = String(cString: strerror(lastError))
            return failure(kind, Code.couldNotConnect, "Failed to connect to \(url.host) port \(url.port) after \(elapsedMs()) ms: \(why)", .connecting)
        }
        defer { close(fd) }
        let connectMs = (ContinuousClock.now - start).milliseconds

        // The request, then the reply.
        var reader = PlainHTTPReplyReader(host: url.host, bodyLimit: request.bodyWanted)
        let sent = await send(Self.requestBytes(url: url, userAgent: request.userAgent), on: fd, until: deadline, waiter: waiter)
        switch sent {
        case .ready: break
        case .timedOut:
            return failure(.timeout, Code.timedOut, "Operation timed out after \(elapsedMs()) milliseconds with 0 bytes received", .exchanging)
        case .cancelled:
            return failure(.cancelled, Code.aborted, "cancelled", .exchanging)
        case .failed(let error):
            return failure(.noReply, Code.sendError, "Send failure: \(String(cString: strerror(error)))", .exchanging)
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        reading: while true {
            switch await waiter.wait(for: fd, events: Int16(POLLIN), until: deadline) {
            case .timedOut:
                return failure(.timeout, Code.timedOut,
                               "Operation timed out after \(elapsedMs()) milliseconds with \(reader.received) bytes received", .exchanging)
            case .cancelled:
                return failure(.cancelled, Code.aborted, "cancelled", .exchanging)
            case .ready:
                break
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let step: PlainHTTPReplyReader.Step
            if n > 0 {
                step = buffer.withUnsafeBufferPointer { reader.read($0.prefix(n)) }
            } else if n == 0 {
                step = reader.end()
            } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                continue
            } else {
                return failure(.noReply, Code.recvError, "Recv failure: \(String(cString: strerror(errno)))", .exchanging)
            }
            switch step {
            case .more: continue
            case .done: break reading
            case .failed(let why):
                return failure(.noReply, reader.received == 0 ? Code.gotNothing : Code.weirdReply, why, .exchanging)
            }
        }
        let redirect = (300...399).contains(reader.status)
            ? reader.headers.lazy.compactMap { Self.location($0) }.first.flatMap { url.resolve(location: $0) }
            : nil
        return .success(HTTPReply(status: reader.status, headers: reader.headers, body: reader.body, truncated: reader.truncated,
                                  redirect: redirect, rttMs: (ContinuousClock.now - start).milliseconds, connectMs: connectMs))
    }

    /// The request libcurl sent for the probe: a GET, no body, the
    /// connection closed after the reply, nothing from a cache.
    package static func requestBytes(url: PlainHTTPURL, userAgent: String) -> [UInt8] {
        // A header value cannot hold a line break; the configured agent never should.
        let agent = String(userAgent.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
        return Array("""
            GET \(url.target) HTTP/1.1\r
            Host: \(url.authority)\r
            User-Agent: \(agent)\r
            Accept: */*\r
            Cache-Control: no-cache\r
            Connection: close\r
            \r

            """.utf8)
    }

    private enum Sent { case ready, timedOut, cancelled, failed(Int32) }

    private static func send(_ bytes: [UInt8], on fd: Int32, until deadline: ContinuousClock.Instant,
                             waiter: any DescriptorWaiter) async -> Sent {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a server that closed early is an error here, not a SIGPIPE.
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, SocketConstants.noSignal) }
            if n > 0 {
                offset += n
                continue
            }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return .failed(n < 0 ? errno : EPIPE) }
            switch await waiter.wait(for: fd, events: Int16(POLLOUT), until: deadline) {
            case .ready: continue
            case .timedOut: return .timedOut
            case .cancelled: return .cancelled
            }
        }
        return .ready
    }

    /// The value of a `Location` header line, or nil for any other line.
    private static func location(_ line: String) -> String? {
        guard let colon = line.firstIndex(of: ":"), line[..<colon].trimmingSpaces().lowercased() == "location" else { return nil }
        return String(line[line.index(after: colon)...].trimmingSpaces())
    }
}

extension AddressFamily {
    /// What `getaddrinfo` is asked for.
    package var addressFamily: Int32 {
        switch self {
        case .any: AF_UNSPEC
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        }
    }

    package func accepts(_ family: Int32) -> Bool { self == .any || family == addressFamily }
}
