import LifelineConfig
import LifelineCore
import LifelineDaemon
import LifelineTOML
import Testing

/// The loader as the daemon runs it, with TOMLKit in this process (the daemon
/// parses in a child; that path is tested on the real binary).
func load(text: String, file: String) throws(ConfigError) -> DaemonConfig {
    try ConfigLoader.load(text: text, file: file, parser: .inProcess)
}

@Suite struct ConfigLoadingTests {
    @Test func noFileRunsTheEmbeddedDefaults() throws {
        let config = try load(text: "", file: "(defaults)")
        #expect(config.debounce == DebounceSettings(down: .seconds(2), up: .seconds(1)))
        #expect(config.sinks.map(\.kind).contains("log"))
        let defaults = try load(text: DefaultConfig.toml, file: "(defaults)")
        #expect(defaults.monitors.map(\.kind) == config.monitors.map(\.kind))
        #expect(defaults.sinks.map(\.kind) == config.sinks.map(\.kind))
    }

    @Test func theBuiltInDefaultTableIsTheDefaultText() throws {
        func sorted(_ value: ConfigValue) -> ConfigValue {
            switch value {
            case .table(let t): .table(ConfigTable(t.entries.map { ($0.key, sorted($0.value)) }.sorted { $0.0 < $1.0 }))
            case .array(let items): .array(items.map(sorted))
            default: value
            }
        }
        let parsed = try TOMLParser.inProcess.parse(DefaultConfig.toml, file: "(defaults)")
        #expect(sorted(.table(parsed)) == sorted(.table(DefaultConfig.table)))
    }

    @Test func sectionsMergeKeyByKey() throws {
        let config = try load(text: "[debounce]\nup = \"250ms\"\n", file: "c.toml")
        #expect(config.debounce == DebounceSettings(down: .seconds(2), up: .milliseconds(250)))
        // No [[sink]] in the file: the default sinks stay.
        let defaults = try load(text: "", file: "(defaults)")
        #expect(config.sinks.map(\.kind) == defaults.sinks.map(\.kind))
    }

    @Test func listingAnySinkReplacesTheDefaultSinks() throws {
        let config = try load(text: """
            [[sink]]
            kind = "log"
            path = "/tmp/only.jsonl"
            """, file: "c.toml")
        #expect(config.sinks.count == 1)
        #expect(config.sinks[0].name == "sink #1 (log)")
    }

    @Test func listingAnyMonitorReplacesTheDefaultMonitors() throws {
        let config = try load(text: """
            [[monitor]]
            kind = "exec"
            command = ["/usr/bin/my-monitor", "--json"]
            role = "link"
            """, file: "c.toml")
        #expect(config.monitors.map(\.kind) == ["exec"])
    }

    @Test func showPrintsAConfigThatLoadsBackTheSame() throws {
        let original = try load(text: """
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
        let again = try load(text: shown, file: "shown.toml")
        #expect(again.debounce == original.debounce)
        #expect(again.monitors.map(\.kind) == original.monitors.map(\.kind))
        #expect(again.sinks.map(\.kind) == original.sinks.map(\.kind))
        #expect(try ConfigPrinter.toml(again).split(separator: "\n").dropFirst() == shown.split(separator: "\n").dropFirst())
        #expect(shown.contains("down = \"1m30s\""))
        #expect(shown.contains("keep = 3"))
    }

    @Test func durationsTooLongAreRefusedBeforeAnyArithmetic() throws {
        #expect(try DurationText.parse("36500d") == .seconds(36500 * 86400))
        let huge = ["2000000000000000d", "170141183460469231732s", "36500d1s", "20000d20000d",
                    String(repeating: "9", count: 400) + "s", "99999999999999999999999999999999999999999h"]
        for text in huge {
            #expect(throws: DurationText.ParseError(text: text, problem: .tooLong), "\(text)") { try DurationText.parse(text) }
        }
        #expect(DurationText.ParseError(text: "9e99d", problem: .tooLong).description
                == "'9e99d' is too long a duration (at most 36500d)")
    }

    @Test func zeroDebounceWindowsStayLegal() throws {
        let config = try load(text: "[debounce]\ndown = \"0s\"\nup = \"0ms\"\n", file: "c.toml")
        #expect(config.debounce == DebounceSettings(down: .zero, up: .zero))
    }

    @Test func durationsAcceptTheSpecForms() throws {
        #expect(try DurationText.parse("5s") == .seconds(5))
        #expect(try DurationText.parse("250ms") == .milliseconds(250))
        #expect(try DurationText.parse("2m") == .seconds(120))
        #expect(try DurationText.parse("1h30m") == .seconds(5400))
        #expect(try DurationText.parse("1.5s") == .milliseconds(1500))
        for bad in ["", "5", "s", "5 parsecs", "-1s", "5sec", "1e9s", "1.2.3s"] {
            #expect(throws: DurationText.ParseError(text: bad), "\(bad)") { try DurationText.parse(bad) }
        }
        #expect(DurationText.format(.milliseconds(1500)) == "1500ms")
        #expect(DurationText.format(.seconds(90)) == "1m30s")
        #expect(DurationText.human(.seconds(133)) == "2m 13s")
    }
}

/// Every registered kind documents itself and decodes from an empty table (or,
/// for a key it cannot do without, says exactly which).
@Suite struct SchemaSelfTest {
    /// By role and kind: the exec monitor needs a command, the exec sink (hooks) does not.
    static let requiredKeys: [String: String] = ["monitor exec": "command", "sink prometheus": "path"]

    @Test func everyKindIsDocumentedAndDecodesFromAnEmptyTable() {
        let kinds = Registry.monitors.map { ("monitor", $0.kind, $0.summary) } + Registry.sinks.map { ("sink", $0.kind, $0.summary) }
        #expect(Set(kinds.map { "\($0.0) \($0.1)" }).count == kinds.count, "a kind is registered twice")
        func isSection<M: Monitor>(_ type: M.Type) -> Bool { M.Config.self is any ConfigSection.Type }
        func isSection<S: Sink>(_ type: S.Type) -> Bool { S.Config.self is any ConfigSection.Type }
        // Only a ConfigSection decodes by overlay onto its defaults.
        for m in Registry.monitors {
            let overlays = isSection(m)
            #expect(overlays, "\(m.kind): Config is not a ConfigSection")
        }
        for s in Registry.sinks {
            let overlays = isSection(s)
            #expect(overlays, "\(s.kind): Config is not a ConfigSection")
        }
        for (role, kind, summary) in kinds {
            #expect(summary.count > 10 && summary.hasSuffix("."), "\(kind) lacks a one-sentence summary")
            let toml = "[[\(role)]]\nkind = \"\(kind)\"\n"
            do {
                _ = try load(text: toml, file: "t.toml")
                #expect(Self.requiredKeys["\(role) \(kind)"] == nil, "\(kind) should require \(Self.requiredKeys["\(role) \(kind)"] ?? "")")
            } catch {
                let required = Self.requiredKeys["\(role) \(kind)"]
                #expect(required != nil && error.key?.hasSuffix(".\(required!)") == true, "\(kind): \(error)")
            }
        }
    }
}
