import CNetlink
import Foundation
import LifelineCore
import LifelineNet
import LifelinePlatform
import Logging
import Synchronization
import Testing
@testable import NetlinkMonitor

/// The poll loop driven directly in a private namespace: what it hands to the
/// daemon, including the check requests the probe acts on, which the event log
/// of the daemon tests cannot show.
@Suite(.serialized) struct NetlinkLoopTests {
    final class Received: Sendable {
        let events = Mutex<[String]>([])
        func append(_ e: NetlinkLoop.Event) {
            let text: String
            switch e {
            case .update(let o, let check):
                text = (o.map { "\($0.state.rawValue) \($0.interface) (\($0.reason))" } ?? "-") + (check ? " check" : "")
            case .failed(let message):
                text = "failed: \(message)"
            }
            events.withLock { $0.append(text) }
        }
        var all: [String] { events.withLock { $0 } }
    }

    /// Builds the loop on a thread that entered `namespace`: sockets belong to
    /// the namespace of the thread that opens them.
    func makeLoop(in namespace: String) async throws -> NetlinkLoop {
        let thread = SerialThread(name: "netns")
        defer { thread.stop() }  // it entered the namespace: it is not used again
        return try await thread.run {
            let fd = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
            defer { if fd >= 0 { close(fd) } }
            guard fd >= 0, ll_enter_netns(fd) == 0 else {
                throw NetlinkSocket.Failure(operation: "setns \(namespace)", errno: errno)
            }
            let settings = NetlinkLoop.Settings(receiveBuffer: nil, deprioritised: NamePatterns(patterns: []),
                                                kinds: InterfaceKinds(sysfsRoot: "/nonexistent"))
            return try NetlinkLoop(settings: settings, logger: Logger(label: "test"))
        }
    }

    @Test(.requires(.rootAnd(["ip"]))) func checksAreRequestedForChangesThatTouchTheDefaultRouteOnly() async throws {
        let net = try NetnsPair()
        let loop = try await makeLoop(in: net.client)
        let received = Received()
        let thread = SerialThread(name: "netlink-test")
        let running = Task { try await thread.run { loop.run { received.append($0) } } }
        defer {
            loop.stop()
            thread.stop()
            running.cancel()
        }
        await Harness.waitUntil("first verdict") { received.all.count == 1 }
        #expect(received.all == ["online v0 (default route via v0)"], "the first verdict asks for no check")

        // Churn of interfaces without a default route: nothing at all.
        try net.churn(pairs: 50)
        try await Task.sleep(for: .milliseconds(300))
        #expect(received.all.count == 1, "\(received.all)")

        // An address on the primary interface: same verdict, but the probe should look.
        try net.client("addr add 10.77.0.9/24 dev v0")
        await Harness.waitUntil("check request") { received.all.count == 2 }
        #expect(received.all.last == "- check")

        try net.client("route del default via 10.77.0.1")
        await Harness.waitUntil("offline") { received.all.count == 3 }
        #expect(received.all.last == "offline  (default route via v0 removed) check")
    }

    @Test(.requires(.rootAnd(["ip"]))) func stopEndsTheThreadPromptly() async throws {
        let net = try NetnsPair()
        let loop = try await makeLoop(in: net.client)
        let finished = Mutex(false)
        let thread = SerialThread(name: "netlink-test")
        defer { thread.stop() }
        let running = Task {
            try await thread.run {
                loop.run { _ in }
                finished.withLock { $0 = true }
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!finished.withLock { $0 }, "it runs until stopped")
        let start = ContinuousClock.now
        loop.stop()
        try await running.value
        #expect(finished.withLock { $0 })
        #expect(ContinuousClock.now - start < .seconds(1))
    }
}
