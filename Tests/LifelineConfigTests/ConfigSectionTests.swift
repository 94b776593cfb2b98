import LifelineConfig
import LifelineCore
import LifelineTOML
import Testing

/// A section decodes by overlaying the keys a file sets onto its defaults, with
/// no decoding code of its own: the mechanism every plugin's `Config` relies on.
@Suite struct ConfigSectionTests {
    struct Sample: ConfigSection, Equatable {
        static var defaults: Self { Self() }
        var name = "x"
        var count = 3
        var wait = ConfigDuration.seconds(5)
        var mode = Mode.fast
        var tags = ["a"]
        var inner = Inner()
        var limit: Int?

        enum Mode: String, ConfigChoice { case fast, slow }

        struct Inner: ConfigSection, Equatable {
            static var defaults: Self { Self() }
            var depth = 1
            var label = "in"
            func validate() throws(ConfigValueError) { try require("depth", depth, in: 1...9) }
        }

        func validate() throws(ConfigValueError) {
            try require("count", count, in: 0...10)
            try require("wait", wait, in: .milliseconds(1)...(.seconds(60)))
        }
    }

    @Test func anEmptyTableIsTheDefaults() throws {
        #expect(try Sample.decode(toml: "") == Sample())
    }

    @Test func keysThatAreSetReplaceOnlyThemselves() throws {
        let s = try Sample.decode(toml: """
            count = 7
            mode = "slow"
            inner = { depth = 4 }
            limit = 12
            """)
        var expected = Sample()
        expected.count = 7
        expected.mode = .slow
        expected.inner.depth = 4
        expected.limit = 12
        #expect(s == expected)
        #expect(s.inner.label == "in", "a nested section overlays too")
    }

    @Test(arguments: [
        ("colour = 1", 1, "colour", "unknown key (known: count, inner, limit, mode, name, tags, wait)"),
        ("name = \"y\"\ncount = 11", 2, "count", "must be between 0 and 10, got 11"),
        ("wait = \"2m\"", 1, "wait", "must be between 1ms and 1m, got 2m"),
        ("mode = \"medium\"", 1, "mode", "must be \"fast\" or \"slow\", got 'medium'"),
        ("count = \"many\"", 1, "count", "expected an integer, found a string"),
        ("tags = [1]", 1, "tags.0", "expected a string, found an integer"),
        ("inner = { deep = 1 }", 1, "inner.deep", "unknown key (known: depth, label)"),
        ("\ninner = { depth = 0 }", 2, "inner.depth", "must be between 1 and 9, got 0"),
        ("inner = 3", 1, "inner", "expected a table, found an integer"),
        ("count = 1.5", 1, "count", "expected an integer, found a float"),
    ])
    func badValuesNameLineAndKey(toml: String, line: Int, key: String, message: String) {
        do {
            _ = try Sample.decode(toml: toml)
            Issue.record("accepted: \(toml)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.key == key, "\(error)")
            #expect(error.message == message, "\(error)")
        }
    }

    @Test func keysListsEveryKeyOptionalOnesIncluded() {
        #expect(ConfigDecoding.keys(of: Sample.self) == ["name", "count", "wait", "mode", "tags", "inner", "limit"])
    }

    @Test func theEncoderGivesBackWhatTheDecoderTakes() throws {
        var s = Sample()
        s.limit = 2
        s.tags = []
        s.inner.label = "she said \"hi\"\n\t\u{7}"
        guard case .table(let table) = try ConfigEncoder.encode(s) else {
            Issue.record("not a table")
            return
        }
        #expect(try Sample.decode(toml: TOMLText.lines(table)) == s)
    }

    @Test(arguments: ["", "plain", "quote \" and backslash \\", "tab\tnewline\nreturn\r", "bell \u{7} escape \u{1B} del \u{7F}",
                      "ünïcödé ✓ 🛜", "'single'", "\"\"\"", "#{@lifeline}"])
    func printedStringsParseBackExactly(text: String) throws {
        let table = try TOMLParser.inProcess.parse("k = " + TOMLText.quote(text), file: "t")
        #expect(table["k"] == .string(text))
    }

    @Test func printedNumbersAndKeysParseBackExactly() throws {
        let values: [ConfigValue] = [.int(.max), .int(.min), .double(2), .double(-0.1), .double(1e300), .double(.infinity),
                                     .bool(true), .array([.int(1), .array([])]), .table(ConfigTable([("a b", .int(1))]))]
        for value in values {
            let table = try TOMLParser.inProcess.parse("\(TOMLText.key("odd key.x")) = \(TOMLText.value(value))", file: "t")
            #expect(table["odd key.x"] == value, "\(value)")
        }
    }
}
