import Foundation
import InMemoryLogging
import LifelineCore
import Logging
@testable import PrometheusSink
import Testing

/// The `prometheus` sink's counting, and its file, without a daemon (the
/// integration tests run it in one and read the file with Prometheus' parser).
@Suite struct PrometheusSinkTests {
    static let t0: Int64 = 1_700_000_000_000_000

    func update(_ state: ConnectivityState, at seconds: Int64, sequence: UInt64, outage: Outage?, transition: Bool = true, rtt: Double = -1) -> Update {
        Update(event: StateEvent(state: state, previous: .online, since: Self.t0 + seconds * 1_000_000, rttMs: rtt, sequence: sequence),
               isTransition: transition, outage: outage)
    }

    func outage(_ id: UInt64, from seconds: Int64, worst: ConnectivityState = .offline, endedAt: Int64? = nil) -> Outage {
        Outage(id: id, since: Self.t0 + seconds * 1_000_000, worst: worst, endedAt: endedAt.map { Self.t0 + $0 * 1_000_000 })
    }

    func seconds(_ s: Int64) -> Int64 { Self.t0 + s * 1_000_000 }

    @Test func countsTransitionsOutagesAndTheirSeconds() {
        var tally = MetricsTally(startedAt: seconds(0))
        tally.take(update(.online, at: 1, sequence: 1, outage: nil), now: seconds(1))
        tally.take(update(.offline, at: 10, sequence: 2, outage: outage(1, from: 10)), now: seconds(12))
        #expect(tally.outages == 1)
        #expect(tally.outageMicros(now: seconds(15)) == 5_000_000)
        // An attribute update and a replay of the same transition count nothing.
        tally.take(update(.offline, at: 10, sequence: 2, outage: outage(1, from: 10), transition: false), now: seconds(16))
        tally.take(update(.offline, at: 10, sequence: 2, outage: outage(1, from: 10)), now: seconds(16))
        tally.take(update(.limited, at: 20, sequence: 3, outage: outage(1, from: 10)), now: seconds(20))
        tally.take(update(.online, at: 30, sequence: 4, outage: outage(1, from: 10, endedAt: 30), rtt: 23), now: seconds(31))
        #expect(tally.transitions == 4)
        #expect(tally.outages == 1)
        #expect(tally.outageMicros(now: seconds(100)) == 20_000_000)
        tally.take(update(.portal, at: 40, sequence: 5, outage: outage(2, from: 40, worst: .portal)), now: seconds(42))
        #expect(tally.outages == 2)
        #expect(tally.outageMicros(now: seconds(45)) == 25_000_000)
        #expect(tally.state == .portal && tally.lastChange == seconds(40))
    }

    /// After a reload the sink starts again from zero: an outage already going on
    /// was counted by the run before, only its time from now on is this run's.
    @Test func anOutageInProgressAtStartCountsOnlyItsTimeFromThen() {
        var tally = MetricsTally(startedAt: seconds(100))
        tally.take(update(.offline, at: 50, sequence: 7, outage: outage(3, from: 50), transition: false), now: seconds(100))
        #expect(tally.outages == 0)
        #expect(tally.transitions == 0)
        tally.take(update(.online, at: 130, sequence: 8, outage: outage(3, from: 50, endedAt: 130)), now: seconds(130))
        #expect(tally.outageMicros(now: seconds(200)) == 30_000_000)
        #expect(tally.transitions == 1)
    }

    /// At daemon start the first outage's degraded time (the debounce) can
    /// begin before the sink does: it is published as a transition, so it counts, all of it.
    @Test func theFirstOutageAfterStartCountsWhenItBeganJustBefore() {
        var tally = MetricsTally(startedAt: seconds(100))
        tally.take(Update(event: .initial(at: seconds(100)), isTransition: false), now: seconds(100))
        tally.take(update(.offline, at: 99, sequence: 1, outage: outage(1, from: 99)), now: seconds(101))
        #expect(tally.outages == 1)
        #expect(tally.outageMicros(now: seconds(104)) == 5_000_000)
    }

    @Test func theExportHasEveryMetricAndNoRoundTripWhileUnknown() {
        let export = MetricsExport()
        var tally = MetricsTally(startedAt: seconds(0))
        tally.take(update(.limited, at: 10, sequence: 1, outage: outage(1, from: 10, worst: .limited)), now: seconds(10))
        let first = String(decoding: export.render(tally, now: seconds(12)), as: UTF8.self)
        for line in ["lifeline_state{state=\"limited\"} 1.0", "lifeline_state{state=\"online\"} 0.0", "lifeline_state{state=\"unknown\"} 0.0",
                     "lifeline_transitions_total 1", "lifeline_outages_total 1", "lifeline_outage_seconds_total 2.0",
                     "lifeline_last_change_timestamp_seconds 1700000010.0"] {
            #expect(first.split(separator: "\n").contains { $0 == line }, "\(line) missing from\n\(first)")
        }
        #expect(!first.contains("lifeline_probe_rtt_seconds"))
        tally.take(update(.online, at: 20, sequence: 2, outage: outage(1, from: 10, endedAt: 20), rtt: 23), now: seconds(20))
        let second = String(decoding: export.render(tally, now: seconds(21)), as: UTF8.self)
        #expect(second.contains("\nlifeline_probe_rtt_seconds 0.023\n"), "\(second)")
        #expect(second.contains("\nlifeline_outage_seconds_total 10.0\n"), "\(second)")
        tally.take(update(.offline, at: 30, sequence: 3, outage: outage(2, from: 30)), now: seconds(30))
        #expect(!String(decoding: export.render(tally, now: seconds(30)), as: UTF8.self).contains("lifeline_probe_rtt_seconds"))
    }

    /// The quality: a gauge per level, and each published reading observed
    /// once in the histograms, however often the file is written.
    @Test func qualityReadingsAreAGaugeAndHistograms() {
        let export = MetricsExport()
        var tally = MetricsTally(startedAt: seconds(0))
        var online = update(.online, at: 1, sequence: 1, outage: nil)
        online.event.quality = Quality(level: .degraded, rttMs: 420, retransmitShare: 0.004)
        tally.take(online, now: seconds(1))
        _ = export.render(tally, now: seconds(2))
        online.event.quality = Quality(level: .good, rttMs: 40, retransmitShare: 0.0)
        tally.take(online, now: seconds(3))
        tally.take(online, now: seconds(4))  // the same reading again: no new observation
        let text = String(decoding: export.render(tally, now: seconds(5)), as: UTF8.self)
        _ = export.render(tally, now: seconds(6))
        let lines = text.split(separator: "\n").map(String.init)
        for line in ["lifeline_quality{level=\"good\"} 1.0", "lifeline_quality{level=\"degraded\"} 0.0",
                     "lifeline_quality_rtt_seconds_count 2", "lifeline_quality_rtt_seconds_bucket{le=\"0.05\"} 1",
                     "lifeline_quality_rtt_seconds_bucket{le=\"0.5\"} 2", "lifeline_quality_retransmit_ratio_count 2",
                     "lifeline_quality_retransmit_ratio_bucket{le=\"0.001\"} 1"] {
            #expect(lines.contains(line), "\(line) missing from\n\(text)")
        }
    }

    @Test func configNeedsAnAbsolutePromPath() {
        func error(_ config: PrometheusSink.Config) -> String? {
            do { try config.validate(); return nil } catch { return error.description }
        }
        #expect(error(.init())?.hasPrefix("path: is required") == true)
        #expect(error(.init(path: "metrics/lifeline.prom"))?.contains("absolute") == true)
        #expect(error(.init(path: "/var/lib/node-exporter/lifeline.txt"))?.contains(".prom") == true)
        #expect(error(.init(path: "/var/lib/node-exporter/.prom"))?.contains(".prom") == true)
        #expect(error(.init(path: "/x/lifeline.prom", interval: .milliseconds(10)))?.hasPrefix("interval:") == true)
        #expect(error(.init(path: "/var/lib/node-exporter/lifeline.prom")) == nil)
    }

    /// Written 0644 whatever the umask, since node_exporter reads it as another user.
    @Test func theFileIsReplacedWholeAndReadableByAll() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("prom-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let old = umask(0o077)
        defer { umask(old) }
        try MetricsFile.replace(dir + "/lifeline.prom", with: Array("a 1\n".utf8))
        try MetricsFile.replace(dir + "/lifeline.prom", with: Array("b 2\n".utf8))
        #expect(try String(contentsOfFile: dir + "/lifeline.prom", encoding: .utf8) == "b 2\n")
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/lifeline.prom")[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["lifeline.prom"])
    }

    /// A folder that is not there yet (node_exporter not set up) is said once,
    /// not once per write, and the file appears as soon as the folder does.
    @Test func aMissingFolderIsSaidOnceAndWritingResumes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("prom-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let handler = InMemoryLogHandler()
        let writer = MetricsWriter(path: dir + "/lifeline.prom", interval: .seconds(15), logger: Logger(label: "test") { _ in handler })
        writer.take(update(.offline, at: 1, sequence: 1, outage: outage(1, from: 1)))
        writer.write()
        writer.write()
        #expect(handler.entries.map(\.level) == [.error])
        #expect(handler.entries.first?.message.description.contains("\(dir)/lifeline.prom.") == true, "\(handler.entries)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        writer.write()
        #expect(handler.entries.last?.message.description == "writing \(dir)/lifeline.prom again after 2 failed attempts")
        let text = try String(contentsOfFile: dir + "/lifeline.prom", encoding: .utf8)
        #expect(text.contains("lifeline_state{state=\"offline\"} 1.0"))
    }
}
