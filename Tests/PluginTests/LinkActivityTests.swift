import Foundation
import LifelineCore
import Testing

@testable import ProbeMonitor

@Suite struct HostFilesTests {
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
    var files: HostFiles { HostFiles(sys: root.path + "/sys") }

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
