import Glibc
import LifelineCore
import LifelinePlatform
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// libcurl as the probe drives it, against a local server that accepts
/// connections and never answers (an upstream that went silent mid-exchange).
@Suite struct CurlTests {
    /// A listening TCP socket on 127.0.0.1 that reads requests and never replies.
    final class SilentServer {
        let fd: Int32
        let port: UInt16

        init() throws {
            let fd = socket(AF_INET, SocketConstants.stream | SocketConstants.closeOnExec, 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
                }
            }
            guard fd >= 0, bound else {
                close(fd)
                throw Failure()
            }
            port = UInt16(bigEndian: address.sin_port)
        }

        struct Failure: Error {}

        private var accepted: [Int32] = []

        /// Waits (bounded) for the next connection and its request (a GET);
        /// returns the connection.
        func awaitRequest(milliseconds: Int32 = 5000) -> Int32? {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, milliseconds) == 1 else { return nil }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return nil }
            accepted.append(client)
            var q = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&q, 1, milliseconds) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(client, &buffer, buffer.count)
            guard n > 0, buffer.starts(with: Array("GET /check ".utf8)) else { return nil }
            return client
        }

        deinit {
            accepted.forEach { close($0) }
            close(fd)
        }
    }

    /// The connection's own end, seen by the server: milliseconds from now until
    /// the client closes it (nil: not within `limit`).
    static func millisecondsUntilClosed(_ fd: Int32, limit: Int32 = 5000) -> Double? {
        let start = ContinuousClock.now
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, limit) == 1 else { return nil }
        var byte: UInt8 = 0
        guard read(fd, &byte, 1) <= 0 else { return nil }
        return (ContinuousClock.now - start).milliseconds
    }

    @Test func anAbandonedProbeStopsAtOnce() async throws {
        let server = try SilentServer()
        let url = "http://127.0.0.1:\(server.port)/check"
        // Five times, as libcurl looks at a transfer waiting for its reply about
        // every 200 ms on its own: a stop that waited for that would be seen late
        // in most rounds.
        for _ in 0..<5 {
            let abandoned = Task { await HTTPProber.fetch(HTTPRequest(url: url, timeout: .seconds(20))) }
            guard let client = server.awaitRequest() else {
                Issue.record("the probe's request never came")
                abandoned.cancel()
                return
            }
            // The request is out and libcurl waits for the reply: abandon it.
            abandoned.cancel()
            let closed = Self.millisecondsUntilClosed(client)
            #expect(closed.map { $0 < 80 } == true, "the abandoned probe closed its connection after \(closed.map { "\($0) ms" } ?? "more than 5 s")")
            guard case .failure(let error) = await abandoned.value else {
                Issue.record("the abandoned probe got an answer")
                return
            }
            #expect(error.kind == .cancelled)
        }
    }
}
