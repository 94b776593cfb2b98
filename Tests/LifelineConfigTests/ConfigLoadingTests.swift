import LifelineConfig
import LifelineCore
import LifelineDaemon
import Testing

@Suite struct ConfigLoadingTests {
    @Test func noFileRunsTheEmbeddedDefaults() throws {
        let config = try ConfigLoader.load(text: "", file: "(defaults)")
        #expect(config.debounce == DebounceSettings(down: .seconds(2), up: .seconds(1)))
        #expect(config.sinks.map(\.kind).contains("log"))
        let defaults = try ConfigLoader.load(text: DefaultConfig.toml, file: "(defaults)")
        #expect(defaults.monitors.map(\.kind) == config.monitors.map(\.kind))
        #expect(defaults.sinks.map(\.kind) == config.sinks.map(\.kind))
    }

    @Test func sectionsMergeKeyByKey() throws {
        let config = try ConfigLoader.load(text: "[debounce]\nup = \"250ms\"\n", file: "c.toml")
        #expect(config.debounce == DebounceSettings(down: .seconds(2), up: .milliseconds(250)))
        // No [[sink]] in the file: the default sinks stay.
        let defaults = try ConfigLoader.load(text: "", file: "(defaults)")
        #expect(config.sinks.map(\.kind) == defaults.sinks.map(\.kind))
    }

    @Test func listingAnySinkReplacesTheDefaultSinks() throws {
        let config = try ConfigLoader.load(text: """
            [[sink]]
            kind = "log"
            path = "/tmp/only.jsonl"
            """, file: "c.toml")
        #expect(config.sinks.count == 1)
        #expect(config.sinks[0].name == "sink #1 (log)")
    }

    @Test func listingAnyMonitorReplacesTheDefaultMonitors() throws {
        let config = try ConfigLoader.load(text: """
            [[monitor]]
            kind = "exec"
            command = ["/usr/bin/my-monitor", "--json"]
            role = "link"
            """, file: "c.toml")
        #expect(config.monitors.map(\.kind) == ["exec"])
    }

    @Test func showPrintsAConfigThatLoadsBackTheSame() throws {
        let original = try ConfigLoader.load(text: """
            [debounce]
            down = "1m30s"

            [[monitor]]
            kind = "exec"
            command = ["/usr/bin/x", "it's \\"quoted\\""]

            [[sink]]
            kind = "log"
            keep = 3
            """, file: "c.toml")
        let shown = try ConfigPrinter.toml(original)
        let again = try ConfigLoader.load(text: shown, file: "shown.toml")
        #expect(again.debounce == original.debounce)
        #expect(again.monitors.map(\.kind) == original.monitors.map(\.kind))
        #expect(again.sinks.map(\.kind) == original.sinks.map(\.kind))
        #expect(try ConfigPrinter.toml(again).split(separator: "\n").dropFirst() == shown.split(separator: "\n").dropFirst())
        #expect(shown.contains("down = \"1m30s\""))
        #expect(shown.contains("keep = 3"))
    }

    @Test func durationsAcceptTheSpecForms() throws {
        #expect(try DurationText.parse("5s") == .seconds(5))
        #expect(try DurationText.parse("250ms") == .milliseconds(250))
        #expect(try DurationText.parse("2m") == .seconds(120))
        #expect(try DurationText.parse("1h30m") == .seconds(5400))
        #expect(try DurationText.parse("1.5s") == .milliseconds(1500))
        for bad in ["", "5", "s", "5 parsecs", "-1s", "5sec", "1e9s"] {
            #expect(throws: DurationText.ParseError.self, "\(bad)") { try DurationText.parse(bad) }
        }
        #expect(DurationText.format(.milliseconds(1500)) == "1500ms")
        #expect(DurationText.format(.seconds(90)) == "1m30s")
        #expect(DurationText.human(.seconds(133)) == "2m 13s")
    }
}

/// STYLE 5: every registered kind documents itself and decodes from an empty
/// table (or, for a key it cannot do without, says exactly which).
@Suite struct SchemaSelfTest {
    static let requiredKeys: [String: String] = ["exec": "command"]

    @Test func everyKindIsDocumentedAndDecodesFromAnEmptyTable() {
        let kinds = Registry.monitors.map { ("monitor", $0.kind, $0.summary) } + Registry.sinks.map { ("sink", $0.kind, $0.summary) }
        #expect(Set(kinds.map { "\($0.0) \($0.1)" }).count == kinds.count, "a kind is registered twice")
        for (role, kind, summary) in kinds {
            #expect(summary.count > 10 && summary.hasSuffix("."), "\(kind) lacks a one-sentence summary")
            let toml = "[[\(role)]]\nkind = \"\(kind)\"\n"
            do {
                _ = try ConfigLoader.load(text: toml, file: "t.toml")
                #expect(Self.requiredKeys[kind] == nil, "\(kind) should require \(Self.requiredKeys[kind] ?? "")")
            } catch {
                let required = Self.requiredKeys[kind]
                #expect(required != nil && error.key?.hasSuffix(".\(required!)") == true, "\(kind): \(error)")
            }
        }
    }
}
