import Foundation
import Testing

/// The `prometheus` sink in a real daemon driven through transitions, its file
/// read the way a fleet reads it: by Prometheus' own Python parser (Debian's
/// python3-prometheus-client), and by a reader racing the writer.
@Suite struct PrometheusScrapeTests {
    /// Debian's interpreter, where python3-prometheus-client installs (a
    /// `python3` earlier on PATH may be another one without it).
    static let python = "/usr/bin/python3"

    static var parserMissing: String? {
        guard let r = try? Harness.run([python, "-c", "import prometheus_client.parser"]), r.status == 0 else {
            return "\(python) with prometheus_client (Debian's python3-prometheus-client)"
        }
        return nil
    }

    /// Every sample in the file as "name{label=value,…}" → value, through the
    /// Python client's exposition parser; also each family's declared type.
    static func parse(_ path: String) throws -> (samples: [String: Double], types: [String: String]) {
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            samples, types = {}, {}
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                types[family.name] = family.type
                for s in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                    samples[s.name + ("{" + labels + "}" if labels else "")] = s.value
            print(json.dumps({"samples": samples, "types": types}))
            """
        let r = try Harness.run([python, "-c", script, path])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let samples = object["samples"] as? [String: Double], let types = object["types"] as? [String: String]
        else { throw ParseFailure(message: "prometheus_client could not parse \(path): \(r.stderr)") }
        return (samples, types)
    }

    struct ParseFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    func setUp(intervalSeconds: Int = 1) throws -> (DaemonFixture, ScriptedNetwork, String) {
        let f = try DaemonFixture()
        let network = ScriptedNetwork(fixture: f)
        try FileManager.default.createDirectory(atPath: f.path("textfile"), withIntermediateDirectories: true)
        let metrics = f.path("textfile/lifeline.prom")
        try f.writeConfig(network.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "prometheus"
            path = "\(metrics)"
            interval = "\(intervalSeconds)s"

            [[sink]]
            kind = "log"
            """))
        return (f, network, metrics)
    }

    @Test func aDaemonThroughTwoOutagesWritesWhatPrometheusReads() async throws {
        try Harness.require(missing: Self.parserMissing.map { "missing \($0)" })
        let (f, network, metrics) = try setUp(intervalSeconds: 60)
        try f.start()
        defer { f.process?.kill() }
        func sample(_ key: String) -> Double? { (try? Self.parse(metrics))?.samples[key] }

        try network.say("online", interface: "eth0", rtt: 12)
        await Harness.waitUntil(timeout: .seconds(30), "online in the file") { sample("lifeline_state{state=online}") == 1 }
        try network.say("offline", interface: "eth0", reason: "cable pulled")
        await Harness.waitUntil("offline in the file") { sample("lifeline_state{state=offline}") == 1 }
        try network.say("online", interface: "eth0", rtt: 12)
        await Harness.waitUntil("online again") { sample("lifeline_transitions_total") == 3 }
        try network.say("limited", interface: "eth0", reason: "probe timed out")
        await Harness.waitUntil("limited in the file") { sample("lifeline_state{state=limited}") == 1 }
        try network.say("online", interface: "eth0", rtt: 30)
        await Harness.waitUntil("the last transition") { sample("lifeline_transitions_total") == 5 }

        let (samples, types) = try Self.parse(metrics)
        for state in ["unknown", "offline", "limited", "portal"] { #expect(samples["lifeline_state{state=\(state)}"] == 0, "\(state)") }
        #expect(samples["lifeline_state{state=online}"] == 1)
        #expect(samples["lifeline_outages_total"] == 2)
        #expect(samples["lifeline_probe_rtt_seconds"] == 0.03)
        // The outages lasted about as long as the test took to end them: more
        // than nothing, less than the daemon has been running.
        let outageSeconds = try #require(samples["lifeline_outage_seconds_total"])
        let logged = f.loggedEvents()
        let sinces = logged.compactMap { ($0["since"] as? NSNumber)?.int64Value }
        #expect(logged.count == 5 && sinces.count == 5, "\(logged)")
        if sinces.count == 5 {
            let expected = Double((sinces[2] - sinces[1]) + (sinces[4] - sinces[3])) / 1e6
            #expect(abs(outageSeconds - expected) < 0.001, "\(outageSeconds) vs \(expected) from the log")
            #expect(samples["lifeline_last_change_timestamp_seconds"].map { abs($0 - Double(sinces[4]) / 1e6) < 0.001 } == true)
        }
        #expect(types["lifeline_state"] == "gauge")
        #expect(types["lifeline_transitions"] == "counter")
        #expect(types["lifeline_outages"] == "counter")
        #expect(types["lifeline_outage_seconds"] == "counter")
        #expect(types["lifeline_probe_rtt_seconds"] == "gauge")
        #expect(types["lifeline_last_change_timestamp_seconds"] == "gauge")
        let mode = try FileManager.default.attributesOfItem(atPath: metrics)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.path("textfile")) == ["lifeline.prom"])
        #expect(await f.stop() == 0)
    }

    /// While an outage lasts the file is rewritten every `interval`, so the
    /// outage seconds grow before it ends.
    @Test func outageSecondsGrowDuringAnOutage() async throws {
        try Harness.require(missing: Self.parserMissing.map { "missing \($0)" })
        let (f, network, metrics) = try setUp(intervalSeconds: 1)
        try f.start()
        defer { f.process?.kill() }
        func sample(_ key: String) -> Double? { (try? Self.parse(metrics))?.samples[key] }
        try network.say("offline", interface: "eth0")
        await Harness.waitUntil(timeout: .seconds(30), "offline in the file") { sample("lifeline_state{state=offline}") == 1 }
        let first = sample("lifeline_outage_seconds_total") ?? -1
        await Harness.waitUntil(timeout: .seconds(5), "outage seconds to grow") {
            (sample("lifeline_outage_seconds_total") ?? -1) >= first + 1
        }
        #expect(await f.stop() == 0)
    }

    /// A reader that opens the file at any moment gets a whole file: every
    /// metric, ending in a newline, never an empty or cut-off one.
    @Test func aReaderNeverSeesAPartialFile() async throws {
        let (f, network, metrics) = try setUp(intervalSeconds: 1)
        try f.start()
        defer { f.process?.kill() }
        try network.say("online", interface: "eth0", rtt: 5)
        await Harness.waitUntil(timeout: .seconds(30), "the first file") { FileManager.default.fileExists(atPath: metrics) }

        let names = ["lifeline_state{state=\"unknown\"}", "lifeline_state{state=\"offline\"}", "lifeline_state{state=\"limited\"}",
                     "lifeline_state{state=\"portal\"}", "lifeline_state{state=\"online\"}", "lifeline_transitions_total ",
                     "lifeline_outages_total ", "lifeline_outage_seconds_total ", "lifeline_last_change_timestamp_seconds "]
        var reads = 0
        var partial: [String] = []
        var versions = Set<String>()
        let clock = ContinuousClock()
        // A new round trip every few milliseconds, each one a new file, and the
        // file read as fast as it goes in between.
        for i in 0..<300 where partial.count < 3 {
            try network.say("online", interface: "eth0", rtt: Double(i + 6))
            let until = clock.now + .milliseconds(7)
            while clock.now < until {
                guard let data = FileManager.default.contents(atPath: metrics) else {
                    partial.append("(no file)")
                    continue
                }
                let text = String(decoding: data, as: UTF8.self)
                reads += 1
                if !text.hasSuffix("\n") || names.contains(where: { !text.contains($0) }) { partial.append(text) }
                if versions.count < 1000 { versions.insert(text) }
            }
        }
        #expect(partial.isEmpty, "\(partial.count) partial reads of \(reads), e.g. \(partial.first ?? "")")
        // The writer was busy all along: the reads caught many versions of the file.
        #expect(versions.count > 20, "\(versions.count) versions in \(reads) reads")
        #expect(await f.stop() == 0)
    }
}
