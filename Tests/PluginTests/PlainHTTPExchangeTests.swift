import Glibc
import LifelineCore
import LifelinePlatform
import Synchronization
import Testing

@testable import LifelineNet
@testable import ProbeMonitor

/// The own client's exchange on real loopback sockets: a cancellation wakes it
/// at once, a closed port is refused, a name-free address needs no lookup.
@Suite struct PlainHTTPExchangeTests {
    /// Runs one exchange in a task of its own; `result` is set when it returns.
    final class Running: Sendable {
        final class Outcome: Sendable {
            let result = Mutex<Result<HTTPReply, HTTPFailure>?>(nil)
        }
        let outcome = Outcome()
        let task: Task<Void, Never>

        init(_ request: HTTPRequest, waiter: any DescriptorWaiter = PollingThreadWaiter()) {
            let url = PlainHTTPURL(request.url)!
            let outcome = self.outcome
            task = Task {
                let r = await PlainHTTPExchange.perform(request, url: url, waiter: waiter)
                outcome.result.withLock { $0 = r }
            }
        }

        deinit { task.cancel() }

        /// The result, waited for in 5 ms steps for at most `limit`.
        func wait(limit: Duration = .seconds(5)) -> Result<HTTPReply, HTTPFailure>? {
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if let r = outcome.result.withLock({ $0 }) { return r }
                usleep(5_000)
            }
            return outcome.result.withLock { $0 }
        }
    }

    @Test func cancellingMidExchangeStopsAtOnce() throws {
        let server = try CurlTests.SilentServer()
        let running = Running(HTTPRequest(url: "http://127.0.0.1:\(server.port)/check", timeout: .seconds(20)))
        guard let client = server.awaitRequest() else {
            running.task.cancel()
            Issue.record("the probe's request never came")
            return
        }
        // The request is out and the client waits for the reply: cancel it.
        running.task.cancel()
        let closed = CurlTests.millisecondsUntilClosed(client)
        #expect(closed.map { $0 < 80 } == true, "closed its connection after \(closed.map { "\($0) ms" } ?? "more than 5 s")")
        guard case .failure(let error)? = running.wait(limit: .seconds(1)) else {
            Issue.record("the cancelled exchange did not return a failure within 1 s")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(error.stage == .exchanging)
    }

    @Test func aClosedPortIsRefused() throws {
        // A port that was just free: bound, never listened on.
        let fd = socket(AF_INET, SocketConstants.stream, 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let running = Running(HTTPRequest(url: "http://127.0.0.1:\(port)/", timeout: .seconds(5)))
        guard case .failure(let error)? = running.wait() else {
            Issue.record("a closed port did not fail")
            return
        }
        #expect(error.kind == .refused)
        #expect(error.stage == .connecting)
        #expect(error.message.hasPrefix("Failed to connect to 127.0.0.1 port \(port) after "), "\(error.message)")
        #expect(error.message.hasSuffix(": Connection refused"), "\(error.message)")
    }

    @Test func anIPv6AddressIsRefusedForAnIPv4OnlyProbe() throws {
        let request = HTTPRequest(url: "http://[::1]:9/", timeout: .seconds(1), family: .ipv4)
        let running = Running(request)
        guard case .failure(let error)? = running.wait() else {
            Issue.record("no failure")
            return
        }
        #expect(error.kind == .dns)
        #expect(error.message == "Could not resolve host: ::1")
    }

    @Test func theRequestIsWhatLibcurlSent() {
        let url = PlainHTTPURL("http://[fd00::1]:8080/a?b=c")!
        let text = String(decoding: PlainHTTPExchange.requestBytes(url: url, userAgent: "Agent\r\nX-Injected: 1"), as: UTF8.self)
        #expect(text == "GET /a?b=c HTTP/1.1\r\nHost: [fd00::1]:8080\r\nUser-Agent: AgentX-Injected: 1\r\nAccept: */*\r\n"
            + "Cache-Control: no-cache\r\nConnection: close\r\n\r\n")
    }
}
