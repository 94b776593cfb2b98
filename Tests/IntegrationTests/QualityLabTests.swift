import CNetlink
import Foundation
import LifelineCore
import LifelineTestKit
import LifelinePlatform
import Synchronization
import Testing
@testable import LifelineNet

/// The quality reading against real TCP traffic in a network namespace: an
/// uploader inside sends to three servers on the far side (addresses off the
/// local subnet, so the traffic leaves by the default route), while nftables
/// drops a share of its packets at random, a token bucket saturates the link,
/// or one server goes dark. The sockets are read through sock_diag from a
/// thread inside the namespace, every 5 s as the probe's counter watcher does
/// while traffic flows (`QualityWatch.gap`), and fed to the estimator with
/// its defaults.
@Suite(.serialized) struct QualityLabTests {
    static let port = 5201
    static let servers = ["198.18.0.1", "198.18.0.2", "198.18.0.3"]

    /// The lab, its server, and a thread that entered the namespace.
    final class Lab: @unchecked Sendable {
        let lab: NetnsLab
        let thread = SerialThread(name: "quality-ns")
        var uploader: Spawned?

        init() throws {
            lab = try NetnsLab(prefix: "llq", upstreamPrefix: "llqu", interfaces: (inside: "q0", outside: "q1"))
            try lab.connect(inside: "10.78.0.2/24", outside: "10.78.0.1/24")
            for s in QualityLabTests.servers { try lab.ip(.outside, "addr", "add", "\(s)/32", "dev", "lo") }
            try lab.startServer(.outside, script: QualityLabTests.script,
                                arguments: ["serve", String(QualityLabTests.port)] + QualityLabTests.servers, name: "sink")
        }

        deinit {
            thread.stop()
            lab.teardown()
        }

        func enter() async throws {
            let namespace = lab.namespace
            try await thread.run {
                let fd = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
                defer { if fd >= 0 { close(fd) } }
                guard fd >= 0, ll_enter_netns(fd) == 0 else {
                    throw NetlinkSocket.Failure(operation: "setns \(namespace)", errno: errno)
                }
            }
        }

        /// CONNS connections to each server, RATE bytes a second each (0: unlimited).
        func upload(connections: Int = 2, rate: Int, to servers: [String] = QualityLabTests.servers) throws {
            let ready = lab.workDir.appendingPathComponent("upload.ready").path
            let p = try lab.spawn(.inside, ["python3", QualityLabTests.script, "upload", String(QualityLabTests.port),
                                            String(connections), String(rate)] + servers, stdout: .file(ready))
            uploader = p
            try lab.wait(for: "uploader") {
                guard p.isRunning else { throw NetnsLab.Failure(description: "the uploader ended") }
                return (try? String(contentsOfFile: ready, encoding: .utf8))?.contains("ready") == true
            }
        }

        func read() async throws -> SockDiagReader.Reading {
            try await thread.run { try SockDiagReader.read(interface: "q0") }
        }
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/quality_traffic.py").path
    }

    /// Samples every 5 s for up to `seconds`; returns each published
    /// quality with the seconds since the first sample. `until`: stop early.
    static func watch(_ lab: Lab, seconds: Int, until: (Quality) -> Bool = { _ in false }) async throws
        -> [(at: Double, quality: Quality)] {
        var estimator = QualityEstimator()
        var published: [(Double, Quality)] = []
        let clock = ContinuousClock()
        let start = clock.now
        for second in stride(from: 0, to: seconds, by: 5) {
            // The daemon's cadence while traffic flows.
            try await clock.sleep(until: start + .seconds(second))
            let reading = try await lab.read()
            let elapsed = start.duration(to: clock.now)
            let flows = reading.connections.compactMap(\.flowSample)
            if let q = estimator.sample(flows, at: Moment(offset: elapsed)) {
                let at = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                published.append((at, q))
                print("quality lab: \(String(format: "%.1f", at)) s \(q.level) rtt \(q.rttMs ?? -1) ms share \(q.retransmitShare ?? -1) remotes \(q.remotes)")
                if until(q) { break }
            }
        }
        return published
    }

    /// Drops `percent` % of what the uploader sends, at random, on the far side.
    static func loss(_ lab: Lab, percent: Int) throws {
        try lab.lab.filter(.outside, name: "llq_loss", rule: ["iifname", "q1", "numgen", "random", "mod", "100", "<",
                                                              String(percent), "drop"])
    }

    @Test(.requires(.rootAnd(["ip", "nft", "python3"])), arguments: [
        (0, QualityLevel.good), (2, .degraded), (10, .poor), (30, .poor),
    ])
    func randomLossIsClassified(percent: Int, expected: QualityLevel) async throws {
        let lab = try Lab()
        try await lab.enter()
        // The connections first, then the loss: a lost SYN is not what is measured.
        try lab.upload(rate: 400_000)
        if percent > 0 { try Self.loss(lab, percent: percent) }
        let published = try await Self.watch(lab, seconds: 60) { $0.level == expected }
        print("quality lab: \(percent) % loss → \(published.last.map { "\($0.quality.level) after \($0.at) s" } ?? "nothing")")
        #expect(published.last?.quality.level == expected, "\(published.map(\.quality))")
        // No other level on the way there, and never worse than expected.
        #expect(published.allSatisfy { $0.quality.level == expected }, "\(published.map(\.quality.level))")
    }

    @Test(.requires(.rootAnd(["ip", "nft", "tc", "python3"])))
    func aSaturatedLosslessLinkIsGood() async throws {
        let lab = try Lab()
        try await lab.enter()
        // A token bucket with a queue: the uploads fill it and wait, as on a busy uplink.
        try lab.lab.run(.inside, ["tc", "qdisc", "add", "dev", "q0", "root", "tbf", "rate", "20mbit", "burst", "32kbit",
                                  "latency", "100ms"])
        try lab.upload(rate: 0)
        let published = try await Self.watch(lab, seconds: 40)
        let shown = published.map { "\($0.quality.level) rtt \($0.quality.rttMs ?? -1) share \($0.quality.retransmitShare ?? -1)" }
        print("quality lab: saturated → \(shown)")
        #expect(!published.isEmpty)
        #expect(published.allSatisfy { $0.quality.level == .good }, "\(shown)")
        let qdisc = try lab.lab.run(.inside, ["tc", "-s", "qdisc", "show", "dev", "q0"])
        print("quality lab: \(qdisc)")
    }

    @Test(.requires(.rootAnd(["ip", "nft", "python3"])))
    func oneDeadServerIsNotTheNetwork() async throws {
        let lab = try Lab()
        try await lab.enter()
        try lab.upload(rate: 400_000)
        // Good first, then the first server stops answering while the others work.
        let before = try await Self.watch(lab, seconds: 30) { $0.level == .good }
        #expect(before.last?.quality.level == .good)
        try lab.lab.filter(.outside, name: "llq_dead", rule: ["ip", "daddr", Self.servers[0], "drop"])
        let after = try await Self.watch(lab, seconds: 40)
        let retransmitting = try await lab.read().connections.filter { $0.destination == [198, 18, 0, 1] }
            .compactMap(\.info?.unackedRetransmits)
        print("quality lab: dead server → \(after.map(\.quality.level)); its connections' unacked retransmits \(retransmitting)")
        #expect(retransmitting.contains { $0 > 0 }, "the dead server's connections retransmit")
        #expect(after.allSatisfy { $0.quality.level == .good }, "\(after.map(\.quality))")
    }

    /// `ss -ti` is the reference: for the same sockets, the same round trip
    /// and the same count of retransmissions. The uploader is paused and the
    /// loss removed first, and the sockets read until two reads agree, so both
    /// look at sockets that no longer change.
    @Test(.requires(.rootAnd(["ip", "nft", "ss", "python3"])))
    func numbersAgreeWithSS() async throws {
        let lab = try Lab()
        try await lab.enter()
        try lab.upload(rate: 200_000)
        try Self.loss(lab, percent: 5)
        _ = try await Self.watch(lab, seconds: 10)
        try lab.lab.deleteTable(.outside, "llq_loss")
        kill(lab.uploader!.pid, SIGSTOP)
        defer { kill(lab.uploader!.pid, SIGCONT) }
        var previous: [TCPConnection] = []
        var current: [TCPConnection] = []
        // Bounded poll: until two reads 200 ms apart agree, 20 s at most.
        var settled = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !settled, ContinuousClock.now < deadline {
            previous = current
            current = try await lab.read().connections.sorted { $0.sourcePort < $1.sourcePort }
            let key = { (c: [TCPConnection]) in c.map { [$0.info?.rttMicros, $0.info?.totalRetransmits, $0.info?.segmentsOut] } }
            settled = !current.isEmpty && key(previous) == key(current)
            if !settled { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(settled)
        let ss = try lab.lab.run(.inside, ["ss", "-tinH", "state", "established"])
        let reference = SSReference.parse(ss)
        #expect(current.count == 6)
        #expect(current.contains { ($0.info?.totalRetransmits ?? 0) > 0 }, "5 % loss made some retransmissions")
        for c in current {
            let local = "\(c.source.map(String.init).joined(separator: ".")):\(c.sourcePort)"
            guard let row = reference[local], let info = c.info else {
                Issue.record("ss does not list \(local): \(ss)")
                continue
            }
            print("quality lab: \(local) ours rtt \(Double(info.rttMicros) / 1000) ms retrans \(info.totalRetransmits); ss rtt \(row.rttMs) ms retrans \(row.retransmits)")
            #expect(abs(Double(info.rttMicros) / 1000 - row.rttMs) < 0.0011, "\(local)")
            #expect(info.totalRetransmits == row.retransmits, "\(local)")
        }
    }
}

/// What `ss -tinH` prints per socket: the local address, `rtt:SRTT/VAR` in ms,
/// and `retrans:NOW/TOTAL` (absent when none).
enum SSReference {
    struct Row { var rttMs: Double; var retransmits: UInt32 }

    static func parse(_ text: String) -> [String: Row] {
        var rows: [String: Row] = [:]
        var local: String?
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if !line.hasPrefix("\t"), !line.hasPrefix(" "), let address = words.first(where: { $0.contains(":") }) {
                // [State] Recv-Q Send-Q Local Peer: the first address is the local one.
                local = String(address)
                continue
            }
            guard let local else { continue }
            var row = Row(rttMs: -1, retransmits: 0)
            for w in words {
                if w.hasPrefix("rtt:") { row.rttMs = Double(w.dropFirst(4).split(separator: "/")[0]) ?? -1 }
                if w.hasPrefix("retrans:") { row.retransmits = UInt32(w.split(separator: "/").last ?? "") ?? 0 }
            }
            rows[local] = row
        }
        return rows
    }
}
