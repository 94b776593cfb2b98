import LifelineCore
import Testing
@testable import LifelineNet
@testable import ProbeMonitor

/// IPv4 and IPv6 judged side by side: one family broken while the other
/// answers is `online`, with the broken one named and marked, never an outage.
struct FamilyJudgeTests {
    let v6Timeout = ProbeOutcome.failed("TCP connect to [fd00::1]:80 timed out after 5s", layer: .tcp)
    let v4Timeout = ProbeOutcome.failed("TCP connect to 10.0.0.1:80 timed out after 5s", layer: .tcp)

    @Test func ipv6BrokenIPv4FineIsOnlineNamingIPv6() {
        var judge = ProbeJudge(failures: 2)
        let first = judge.record(families: [("ipv4", .pong(rttMs: 3)), ("ipv6", v6Timeout)], interface: "eth0", path: 1, afterStall: nil)
        #expect(first.state == .online)
        // One lost IPv6 probe is not yet a broken family.
        #expect(first.families == FamilyStates(ipv4: .online))
        #expect(first.reason == "probe answered in 3 ms")
        let second = judge.record(families: [("ipv4", .pong(rttMs: 3)), ("ipv6", v6Timeout)], interface: "eth0", path: 1, afterStall: nil)
        #expect(second.state == .online && second.diagnosis == Diagnosis.none)
        #expect(second.families == FamilyStates(ipv4: .online, ipv6: .limited))
        #expect(second.reason == "IPv6 broken: TCP connect to [fd00::1]:80 timed out after 5s; probe answered in 3 ms")
        // IPv6 back: both online, nothing named.
        let back = judge.record(families: [("ipv4", .pong(rttMs: 3)), ("ipv6", .pong(rttMs: 5))], interface: "eth0", path: 1, afterStall: nil)
        #expect(back.families == FamilyStates(ipv4: .online, ipv6: .online))
        #expect(back.reason == "probe answered in 3 ms")
    }

    @Test func bothBrokenIsLimitedWithIPv4sSentence() {
        var judge = ProbeJudge(failures: 1)
        let o = judge.record(families: [("ipv4", v4Timeout), ("ipv6", v6Timeout)], interface: "eth0", path: 1, afterStall: nil)
        #expect(o.state == .limited && o.diagnosis == .tcp)
        #expect(o.reason == "TCP connect to 10.0.0.1:80 timed out after 5s")
        #expect(o.families == FamilyStates(ipv4: .limited, ipv6: .limited))
    }

    @Test func aNewPathForgetsTheFamilies() {
        var judge = ProbeJudge(failures: 1)
        _ = judge.record(families: [("ipv4", .pong(rttMs: 3)), ("ipv6", v6Timeout)], interface: "eth0", path: 1, afterStall: nil)
        let o = judge.record(families: [("ipv4", .pong(rttMs: 3))], interface: "wlan0", path: 2, afterStall: nil)
        #expect(o.families == FamilyStates(ipv4: .online))
    }

    @Test func oneUndividedProbeSaysNothingPerFamily() {
        var judge = ProbeJudge(failures: 1)
        let o = judge.record(families: [("any", .pong(rttMs: 3))], interface: "eth0", path: 1, afterStall: nil)
        #expect(o.state == .online && o.families.isEmpty)
    }
}
