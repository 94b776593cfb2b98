import Foundation
import LifelineCore
import Testing

@testable import ProbeMonitor

@Suite struct DefaultRouteTests {
    static let ipv4 = """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t010200C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        wlan0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
        docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
        """

    static let ipv6 = """
        fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
        00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
        """

    @Test func parsesDefaultRoutesOnly() {
        #expect(DefaultRoute.parseIPv4(Self.ipv4) == [
            DefaultRoute(interface: "eth0", metric: 600, family: 4),
            DefaultRoute(interface: "wlan0", metric: 100, family: 4),
        ])
        // The unreachable default on lo (flags 0x200, reject) is not a route out.
        #expect(DefaultRoute.parseIPv6(Self.ipv6) == [DefaultRoute(interface: "eth0", metric: 1024, family: 6)])
    }

    @Test func garbageIsIgnored() {
        #expect(DefaultRoute.parseIPv4("nonsense\n\n\t\t\nx 00000000 y zz 0 0 q 00000000").isEmpty)
        #expect(DefaultRoute.parseIPv6(String(repeating: "0", count: 500)).isEmpty)
    }

    @Test func picksTheLowestMetricAndHonoursTheFamily() throws {
        let root = try FakeHost()
        try root.write("proc/net/route", Self.ipv4)
        try root.write("proc/net/ipv6_route", Self.ipv6)
        #expect(root.files.defaultRouteInterface(family: .any) == "wlan0")
        #expect(root.files.defaultRouteInterface(family: .ipv6) == "eth0")
        try root.write("sys/class/net/wlan0/operstate", "down\n")
        #expect(root.files.defaultRouteInterface(family: .ipv4) == "eth0")
        try root.write("proc/net/route", "Iface\tDestination\n")
        try root.write("proc/net/ipv6_route", "")
        #expect(root.files.defaultRouteInterface(family: .any) == nil)
    }

    @Test func readsCountersFromSysfs() throws {
        let root = try FakeHost()
        try root.write("sys/class/net/eth0/statistics/tx_packets", "42\n")
        try root.write("sys/class/net/eth0/statistics/rx_packets", "7\n")
        #expect(root.files.counters(of: "eth0") == PacketCounters(tx: 42, rx: 7))
        #expect(root.files.counters(of: "nope") == nil)
        #expect(root.files.counters(of: "../../x") == nil)
    }
}

/// A throw-away /proc and /sys.
final class FakeHost {
    let root: URL
    var files: HostFiles { HostFiles(proc: root.path + "/proc", sys: root.path + "/sys") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-host-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func write(_ path: String, _ text: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}

@Suite struct StallDetectorTests {
    func at(_ s: Int) -> Moment { Moment(offset: .seconds(s)) }

    /// Feeds one sample a second: (tx, rx, probe busy).
    func run(_ samples: [(UInt64, UInt64, Bool)], window: Duration = .seconds(3)) -> [(Int, StallDetector.Signal)] {
        var d = StallDetector(window: window)
        var out: [(Int, StallDetector.Signal)] = []
        for (i, s) in samples.enumerated() {
            if let signal = d.sample(interface: "eth0", counters: PacketCounters(tx: s.0, rx: s.1), at: at(i), probeBusy: s.2) {
                out.append((i, signal))
            }
        }
        return out
    }

    @Test func packetsOutNoneInForTheWindowIsAStall() {
        // Healthy until 2, then tx grows each second and rx stays.
        let samples: [(UInt64, UInt64, Bool)] = [(0, 0, false), (10, 10, false), (20, 20, false),
                                                 (30, 20, false), (40, 20, false), (50, 20, false), (60, 20, false), (70, 20, false)]
        let signals = run(samples)
        #expect(signals.count == 1)
        #expect(signals.first?.0 == 5 && signals.first?.1 == .stall(since: at(2)))
    }

    @Test func aLoneNoisePacketAmidAStreamIsNotAnAnswer() {
        // 20 packets/s out; an ARP reply (1 in) at 3 s does not restart the window.
        let samples: [(UInt64, UInt64, Bool)] = [(0, 0, false), (20, 20, false), (40, 20, false),
                                                 (60, 21, false), (80, 21, false), (100, 21, false)]
        #expect(run(samples).map(\.0) == [4])
        // Sparse traffic answered packet for packet is answered.
        #expect(run((0..<10).map { (UInt64($0), UInt64($0), false) }).isEmpty)
    }

    @Test func idleInterfaceNeverStalls() {
        #expect(run(Array(repeating: (5, 5, false), count: 20)).isEmpty)
    }

    @Test func oneLonelyPacketIsNotAStall() {
        // A single unanswered packet (tx grew once) does not keep leaving.
        #expect(run([(0, 0, false), (1, 0, false)] + Array(repeating: (1, 0, false), count: 10)).isEmpty)
    }

    @Test func packetsArrivingAgainAfterAStallIsResumed() {
        var samples: [(UInt64, UInt64, Bool)] = (0..<6).map { (UInt64($0) * 10, 0, false) }
        samples.append((60, 5, false))
        let signals = run(samples)
        #expect(signals.map(\.1) == [.stall(since: at(0)), .resumed])
    }

    @Test func theProbesOwnPacketsFoolNeitherSignal() {
        // Stalled; then only probe windows see rx: no `resumed`, no second stall.
        var samples: [(UInt64, UInt64, Bool)] = (0..<5).map { (UInt64($0) * 10, 0, false) }
        samples += [(50, 3, true), (60, 3, false), (70, 6, true), (80, 6, false), (90, 6, false), (100, 6, false)]
        #expect(run(samples).map(\.1) == [.stall(since: at(0))])
    }

    @Test func answersBeyondWhatAProbeCausesCountDuringAProbe() {
        // Stalled, then a (blackholed) probe runs for 5 s; the upstream comes back
        // meanwhile and the user's 20 packets/s are answered: resumed at once.
        var samples: [(UInt64, UInt64, Bool)] = (0..<5).map { (UInt64($0) * 20, 0, false) }
        samples += [(102, 0, true), (124, 2, true), (150, 30, true)]
        #expect(run(samples).map(\.1) == [.stall(since: at(0)), .resumed])
        #expect(run(samples).last?.0 == 7)
    }

    @Test func newInterfaceOrCounterResetStartsOver() {
        var d = StallDetector(window: .seconds(1))
        _ = d.sample(interface: "eth0", counters: PacketCounters(tx: 100, rx: 100), at: at(0), probeBusy: false)
        _ = d.sample(interface: "eth0", counters: PacketCounters(tx: 110, rx: 100), at: at(1), probeBusy: false)
        #expect(d.sample(interface: "wlan0", counters: PacketCounters(tx: 120, rx: 100), at: at(2), probeBusy: false) == nil)
        #expect(d.sample(interface: "wlan0", counters: PacketCounters(tx: 0, rx: 0), at: at(3), probeBusy: false) == nil)
    }
}
