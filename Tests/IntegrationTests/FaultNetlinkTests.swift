import Foundation
import Testing

/// The kernel drops netlink events (ENOBUFS) while the daemon is stopped and its
/// receive buffer is tiny, again and again, each time while the network really
/// changes under the churn: the route moves to another interface, that
/// interface loses its carrier, the carrier returns. After each overflow the
/// daemon re-reads everything and publishes the right verdict, once.
@Suite(.serialized) struct FaultNetlinkTests {
    /// While the daemon is stopped: 100 veth pairs created and deleted, 400
    /// default-route changes that pass its filter (more than the buffer holds),
    /// then `change`, the one that matters.
    func overflow(_ net: NetnsPair, daemon pid: Int32, gateway: String, then change: () throws -> Void) throws {
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        try net.churn(pairs: 100)
        let metrics = 2000..<2200
        try NetnsPair.ip(["-n", net.client, "-batch", "-"],
                         stdin: (metrics.map { "route add default via \(gateway) metric \($0)" }
                                 + metrics.map { "route del default via \(gateway) metric \($0)" }).joined(separator: "\n") + "\n")
        try change()
    }

    func overflows(_ d: DaemonFixture) -> Int { d.logLines(containing: "ENOBUFS").count }

    @Test(.requires(.rootAnd(["ip"]))) func repeatedOverflowsDuringChurnEachEndInTheRightVerdict() async throws {
        let net = try NetnsPair()
        // A second way out: w0 (10.78.0.2) to the upstream's w1 (10.78.0.1).
        try net.lab.addVeth(inside: "w0", outside: "w1")
        try net.client("addr add 10.78.0.2/24 dev w0", "link set w0 up")
        try net.upstream("addr add 10.78.0.1/24 dev w1", "link set w1 up")
        let d = try net.daemon(monitorKeys: "receive_buffer = 4096")
        defer { d.stopNow() }
        await d.expectEvents([online])
        let pid = try #require(d.process?.pid)
        let viaW0 = LoggedEvent(state: "online", interface: "w0", reason: "default route via w0")

        // 1. The default route moves from v0 to w0 while events are lost.
        try overflow(net, daemon: pid, gateway: "10.77.0.1") {
            try net.client("route del default via 10.77.0.1", "route add default via 10.78.0.1 dev w0")
        }
        await d.expectEvents([online, viaW0])
        #expect(overflows(d) >= 1, "no overflow: the test proves nothing\n\(d.daemonLog)")

        // 2. w0's carrier goes (the peer is set down): the route stays, the link is dead.
        let before = overflows(d)
        try overflow(net, daemon: pid, gateway: "10.78.0.1") { try net.upstream("link set w1 down") }
        await d.expectEvents([online, viaW0, offline("carrier lost on w0")])
        #expect(overflows(d) > before, "no second overflow\n\(d.daemonLog)")

        // 3. The carrier returns: the surviving route is enough.
        let second = overflows(d)
        try overflow(net, daemon: pid, gateway: "10.77.0.1") { try net.upstream("link set w1 up") }
        await d.expectEvents([online, viaW0, offline("carrier lost on w0"), viaW0])
        #expect(overflows(d) > second, "no third overflow\n\(d.daemonLog)")

        await d.expectQuiet(count: 4)
        #expect(d.process?.isRunning == true)
        #expect(await d.stop() == 0)
    }
}
