import Foundation
import Testing

/// Two private network namespaces joined by a veth pair: the client (`v0`,
/// 10.77.0.2/24, fd77::2/64, default routes via the upstream) where the daemon
/// runs, and the upstream (`v1`, 10.77.0.1, fd77::1). Only these namespaces are
/// ever touched; both are deleted when the value goes away.
final class NetnsPair {
    let lab: NetnsLab
    var client: String { lab.namespace }
    var upstream: String { lab.upstream! }

    init() throws {
        lab = try NetnsLab(prefix: "llc", upstreamPrefix: "llu", interfaces: (inside: "v0", outside: "v1"))
        try lab.address(.inside, "10.77.0.2/24")
        try lab.address(.inside, "fd77::2/64")
        try lab.link(.inside, up: true)
        try lab.address(.outside, "10.77.0.1/24")
        try lab.address(.outside, "fd77::1/64")
        try lab.link(.outside, up: true)
        try lab.defaultRoute(via: "10.77.0.1")
    }

    static func ip(_ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try Harness.run(["ip"] + arguments, stdin: stdin)
        if r.status != 0 {
            Issue.record("ip \(arguments.joined(separator: " ")) failed: \(r.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// Runs `ip -n CLIENT …` once per command, as one `ip -batch`.
    func client(_ commands: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        try Self.ip(["-n", client, "-batch", "-"], stdin: commands.joined(separator: "\n") + "\n", sourceLocation: sourceLocation)
    }

    func upstream(_ commands: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        try Self.ip(["-n", upstream, "-batch", "-"], stdin: commands.joined(separator: "\n") + "\n", sourceLocation: sourceLocation)
    }

    /// Creates `count` veth pairs in the client namespace, brings them up and deletes them again.
    func churn(pairs count: Int) throws { try lab.churn(pairs: count) }

    /// A daemon inside the client namespace with the netlink monitor, short
    /// debounce windows and the log sink.
    func daemon(monitorKeys: String = "") throws -> DaemonFixture {
        let d = try DaemonFixture()
        try d.writeConfig("""
            [debounce]
            down = "200ms"
            up = "200ms"

            [[monitor]]
            kind = "netlink"
            \(monitorKeys)

            [[sink]]
            kind = "log"
            """)
        d.commandPrefix = ["ip", "netns", "exec", client]
        try d.start()
        return d
    }
}

struct LoggedEvent: Equatable, CustomStringConvertible {
    var state: String
    var interface: String
    var reason: String
    var description: String { "\(state) [\(interface)] \(reason)" }
}

extension DaemonFixture {
    var events: [LoggedEvent] {
        loggedEvents().map {
            LoggedEvent(state: $0["state"] as? String ?? "?", interface: $0["interface"] as? String ?? "?",
                        reason: $0["reason"] as? String ?? "?")
        }
    }

    /// Waits (bounded) until the log holds exactly `expected`.
    func expectEvents(_ expected: [LoggedEvent], timeout: Duration = .seconds(10),
                      sourceLocation: SourceLocation = #_sourceLocation) async {
        let ok = await Harness.waitUntil(timeout: timeout, "events \(expected)", sourceLocation: sourceLocation) {
            events.count >= expected.count
        }
        #expect(events == expected, "daemon log:\n\(ok ? "" : daemonLog)", sourceLocation: sourceLocation)
    }

    /// Checks that nothing more is published for `duration` (longer than the
    /// debounce windows): the only way to see that a change did not alert.
    func expectQuiet(for duration: Duration = .milliseconds(800), count: Int,
                     sourceLocation: SourceLocation = #_sourceLocation) async {
        let clock = ContinuousClock()
        let end = clock.now + duration
        while clock.now < end, events.count == count { try? await Task.sleep(for: .milliseconds(20)) }
        #expect(events.count == count, "unexpected events: \(events)", sourceLocation: sourceLocation)
    }
}

let online = LoggedEvent(state: "online", interface: "v0", reason: "default route via v0")
func offline(_ reason: String) -> LoggedEvent { LoggedEvent(state: "offline", interface: "", reason: reason) }

@Suite(.serialized) struct NetlinkTests {
    static let tools = ["ip"]

    static func batch(_ net: NetnsPair, _ commands: [String]) throws {
        try NetnsPair.ip(["-n", net.client, "-batch", "-"], stdin: commands.joined(separator: "\n") + "\n")
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func linkDownAndUp() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await d.expectEvents([online])
        #expect(d.loggedEvents().first?["kind"] as? String == "ethernet")
        try net.client("link set v0 down")
        await d.expectEvents([online, offline("v0 is down")])
        // Up again, the kernel does not restore IPv4 routes: still offline…
        try net.client("link set v0 up")
        await d.expectQuiet(count: 2)
        // …until something (a DHCP client) adds the default route back.
        try net.client("route add default via 10.77.0.1")
        await d.expectEvents([online, offline("v0 is down"), online])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func routeDeleteAndReAdd() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await d.expectEvents([online])
        try net.client("route del default via 10.77.0.1")
        await d.expectEvents([online, offline("default route via v0 removed")])
        try net.client("route add default via 10.77.0.1")
        await d.expectEvents([online, offline("default route via v0 removed"), online])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func peerDownIsCarrierLoss() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await d.expectEvents([online])
        try net.upstream("link set v1 down")
        await d.expectEvents([online, offline("carrier lost on v0")])
        // The route survived carrier loss: carrier back is enough.
        try net.upstream("link set v1 up")
        await d.expectEvents([online, offline("carrier lost on v0"), online])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func routeReplace() async throws {
        let net = try NetnsPair()
        // w0 is down when the daemon starts; it comes up while the daemon only
        // watches v0, so the monitor must re-read it when the route moves there.
        try net.lab.addVeth(inside: "w0", outside: "w1")
        try net.client("addr add 10.78.0.2/24 dev w0")
        try net.upstream("addr add 10.78.0.1/24 dev w1", "link set w1 up")
        let d = try net.daemon()
        await d.expectEvents([online])
        try net.client("link set w0 up")
        await d.expectQuiet(count: 1)
        try net.client("route replace default via 10.78.0.1 dev w0")
        let viaW0 = LoggedEvent(state: "online", interface: "w0", reason: "default route via w0")
        await d.expectEvents([online, viaW0])
        try net.client("route replace unreachable default")
        await d.expectEvents([online, viaW0, offline("default route via w0 replaced by an unreachable route")])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func ipv4DefaultGoneWhileIPv6Remains() async throws {
        let net = try NetnsPair()
        try net.client("route add default via fd77::1 dev v0")
        let d = try net.daemon()
        await d.expectEvents([online])
        try net.client("route del default via 10.77.0.1")
        await d.expectQuiet(count: 1)
        try net.client("route del default via fd77::1 dev v0")
        await d.expectEvents([online, offline("default route via v0 removed")])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func addressRemoval() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await d.expectEvents([online])
        // The kernel drops the default route with the last IPv4 address, silently.
        try net.client("addr del 10.77.0.2/24 dev v0")
        await d.expectEvents([online, offline("address 10.77.0.2/24 removed from v0")])
        try net.client("addr add 10.77.0.2/24 dev v0", "route add default via 10.77.0.1")
        await d.expectEvents([online, offline("address 10.77.0.2/24 removed from v0"), online])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func twoHundredVethPairsChangeNothing() async throws {
        let net = try NetnsPair()
        let d = try net.daemon()
        await d.expectEvents([online])
        try net.churn(pairs: 200)
        await d.expectQuiet(count: 1)
        // Still following the kernel exactly after the storm.
        try net.client("route del default via 10.77.0.1")
        await d.expectEvents([online, offline("default route via v0 removed")])
        #expect(await d.stop() == 0)
    }

    @Test(.requires(.rootAnd(NetlinkTests.tools))) func overflowIsFollowedByAnExactReDump() async throws {
        let net = try NetnsPair()
        let d = try net.daemon(monitorKeys: "receive_buffer = 4096")
        await d.expectEvents([online])
        let pid = try #require(d.process?.pid)
        // A stopped reader and a tiny buffer: the kernel must drop events,
        // including the route deletion that matters. The socket filter drops
        // veth churn before it queues, so the flood is default routes, which pass.
        kill(pid, SIGSTOP)
        try net.churn(pairs: 200)
        let metrics = 1000..<1200
        try Self.batch(net, metrics.map { "route add default via 10.77.0.1 metric \($0)" }
            + metrics.map { "route del default via 10.77.0.1 metric \($0)" }
            + ["route del default via 10.77.0.1"])
        kill(pid, SIGCONT)
        await d.expectEvents([online, offline("default route via v0 removed")])
        #expect(d.daemonLog.contains("ENOBUFS"))
        #expect(d.daemonLog.contains("re-dumped"))
        try net.client("route add default via 10.77.0.1")
        await d.expectEvents([online, offline("default route via v0 removed"), online])
        #expect(await d.stop() == 0)
    }
}
