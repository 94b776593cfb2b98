import Foundation
import LifelineConfig
import LifelineDaemon
import Testing

/// The plain format the TOML child answers in: what it writes reads back the
/// same, and bytes it never writes are refused with a reason, never a crash.
@Suite struct ConfigWireTests {
    static let sample = ConfigTable([
        ("debounce", .table(ConfigTable([("down", .string("2s"))]))),
        ("sink", .array([.table(ConfigTable([
            ("kind", .string("tmux")),
            ("format", .string("ünïcödé\n\"quoted\" \u{1}")),
            ("keep", .int(-9_223_372_036_854_775_807)),
            ("ratio", .double(-0.1)),
            ("colors", .bool(false)),
            ("when", .other(typeName: "a date")),
            ("", .array([])),
        ]))])),
    ])

    @Test func whatTheChildWritesReadsBackTheSame() throws {
        let bytes = ConfigWire.write(.table(Self.sample))
        #expect(try ConfigWire.read(bytes) == .table(Self.sample))
        let error = ConfigWire.Outcome.syntaxError(line: 7, message: "Error while parsing key")
        #expect(try ConfigWire.read(ConfigWire.write(error)) == error)
        let noLine = ConfigWire.Outcome.syntaxError(line: nil, message: "")
        #expect(try ConfigWire.read(ConfigWire.write(noLine)) == noLine)
    }

    @Test func everyTruncationIsRefused() {
        let bytes = ConfigWire.write(.table(Self.sample))
        for length in 0..<bytes.count {
            #expect(throws: ConfigWire.Unreadable.self, "\(length) bytes") { try ConfigWire.read(bytes[0..<length]) }
        }
    }

    @Test(arguments: [
        ("no header", "ok\nt0\n", "does not start with"),
        ("unknown status", "lifeline-config-tree 1\nmaybe\n", "unknown status"),
        ("count past the end", "lifeline-config-tree 1\nok\nt99999999999999999999\n", "bad count"),
        ("count larger than the bytes", "lifeline-config-tree 1\nok\na1000\ni1\n", "bad count"),
        ("string past the end", "lifeline-config-tree 1\nok\nt1\ns100\nkind\n", "bad count"),
        ("string without its newline", "lifeline-config-tree 1\nok\nt1\ns1\nkX", "runs past the end"),
        ("integer overflow", "lifeline-config-tree 1\nok\nt1\ns1\ni\ni9223372036854775808\n", "bad integer"),
        ("integer with a sign only", "lifeline-config-tree 1\nok\nt1\ns1\ni\ni-\n", "bad integer"),
        ("float of the wrong length", "lifeline-config-tree 1\nok\nt1\ns1\nf\nf3ff\n", "bad float"),
        ("duplicate key", "lifeline-config-tree 1\nok\nt2\ns1\na\nb1\ns1\na\nb0\n", "appears twice"),
        ("not a table", "lifeline-config-tree 1\nok\ni1\n", "not a table"),
        ("trailing bytes", "lifeline-config-tree 1\nok\nt0\nt0\n", "after the document"),
        ("bad error line", "lifeline-config-tree 1\nerror 0\ns0\n\n", "bad error line"),
        ("unknown value", "lifeline-config-tree 1\nok\nt1\ns1\nx\nz\n", "unknown value"),
    ])
    func malformedAnswersAreRefusedWithAReason(name: String, text: String, reason: String) {
        #expect { try ConfigWire.read(Array(text.utf8)) } throws: {
            ($0 as? ConfigWire.Unreadable)?.description.contains(reason) == true
        }
    }

    @Test func invalidUTF8AndDeepNestingAreRefused() {
        var bytes = Array("lifeline-config-tree 1\nok\nt1\ns2\n".utf8) + [0xC3, 0x28] + Array("\nb1\n".utf8)
        #expect { try ConfigWire.read(bytes) } throws: { "\($0)".contains("not UTF-8") }
        bytes = Array("lifeline-config-tree 1\nok\nt1\ns2\n".utf8) + [0x61, 0] + Array("\nb1\n".utf8)
        #expect { try ConfigWire.read(bytes) } throws: { "\($0)".contains("NUL") }
        bytes = Array("lifeline-config-tree 1\nok\nt1\ns1\na\n".utf8)
        for _ in 0..<100 { bytes += Array("a1\n".utf8) }
        bytes += Array("b1\n".utf8)
        #expect { try ConfigWire.read(bytes) } throws: { "\($0)".contains("nested more than") }
    }

    /// The committed fuzz seeds are real answers of the child: they must stay
    /// readable as the format changes, and the valid one must load.
    @Test func fuzzSeedsAreReadableAnswers() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fuzz/corpus/config")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wire") }.sorted()
        #expect(seeds.count >= 5)
        for seed in seeds {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(seed)))
            let outcome = try ConfigWire.read(bytes)
            if seed == "full.wire" || seed == "defaults.wire" {
                guard case .table(let table) = outcome else { Issue.record("\(seed): \(outcome)"); continue }
                let config = try ConfigLoader.load(table: table, text: "", file: seed)
                #expect(config.monitors.count + config.sinks.count >= 6, "\(seed)")
            }
        }
    }
}
