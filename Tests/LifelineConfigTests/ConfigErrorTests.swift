import LifelineConfig
import LifelineCore
import LifelineDaemon
import LifelineTOML
import Testing

/// Bad configs must be refused with an error naming file, line and key.
@Suite struct ConfigErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var toml: String
        var line: Int?
        var key: String?
        var message: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unknown top-level key", toml: """
            [debounce]
            down = "2s"
            [notify]
            x = 1
            """, line: 3, key: "notify", message: "unknown key (known: debounce, monitor, sink)"),
        Case(name: "unknown key in a section", toml: """
            [debounce]
            down = "2s"
            upp = "1s"
            """, line: 3, key: "debounce.upp", message: "unknown key (known: down, up)"),
        Case(name: "bad duration", toml: """
            [debounce]
            down = "5 parsecs"
            """, line: 2, key: "debounce.down", message: "'5 parsecs' is not a duration"),
        Case(name: "duration without unit", toml: """
            [debounce]

            up = "250"
            """, line: 3, key: "debounce.up", message: "'250' is not a duration"),
        Case(name: "duration of the wrong type", toml: """
            [debounce]
            down = 2
            """, line: 2, key: "debounce.down", message: "expected a string, found an integer"),
        Case(name: "unknown sink kind", toml: """
            [[sink]]
            kind = "log"

            [[sink]]
            kind = "pager"
            """, line: 5, key: "sink #2.kind", message: "unknown sink 'pager' (known: "),
        Case(name: "unknown monitor kind", toml: """
            [[monitor]]
            kind = "carrier-pigeon"
            """, line: 2, key: "monitor #1.kind", message: "unknown monitor 'carrier-pigeon' (known: exec"),
        Case(name: "missing kind", toml: """
            [[sink]]
            path = "/tmp/x"
            """, line: 1, key: "sink #1.kind", message: "missing (required)"),
        Case(name: "unknown key in a plugin", toml: """
            [[sink]]
            kind = "log"
            path = "/tmp/events.jsonl"
            colour = "red"
            """, line: 4, key: "sink #1 (log).colour", message: "unknown key (known: keep, max_size, path)"),
        Case(name: "wrong type in a plugin", toml: """
            [[sink]]
            kind = "log"
            keep = "five"
            """, line: 3, key: "sink #1 (log).keep", message: "expected an integer, found a string"),
        Case(name: "invalid value in a plugin", toml: """
            [[sink]]
            kind = "log"
            max_size = 10
            """, line: 3, key: "sink #1 (log).max_size", message: "must be between 1024 and 1073741824 bytes, got 10"),
        Case(name: "a duration too long to compute", toml: """
            [debounce]
            down = "2000000000000000d"
            """, line: 2, key: "debounce.down", message: "'2000000000000000d' is too long a duration (at most 36500d)"),
        Case(name: "a plugin duration beyond Int128", toml: """
            [[monitor]]
            kind = "probe"

            timeout = "170141183460469231732s"
            """, line: 4, key: "monitor #1 (probe).timeout",
            message: "'170141183460469231732s' is too long a duration (at most 36500d)"),
        Case(name: "a debounce window over its range", toml: """
            [debounce]
            up = "2h"
            """, line: 2, key: "debounce.up", message: "must be between 0s and 1h, got 2h"),
        Case(name: "an integer too large for any setting", toml: """
            [[sink]]
            kind = "log"
            keep = 9223372036854775807
            """, line: 3, key: "sink #1 (log).keep", message: "must be between 0 and 100, got 9223372036854775807"),
        Case(name: "a word not among the choices", toml: """
            [[monitor]]
            kind = "probe"
            family = "ipx"
            """, line: 3, key: "monitor #1 (probe).family", message: "must be \"any\", \"ipv4\" or \"ipv6\", got 'ipx'"),
        Case(name: "a plugin written as a value", toml: """
            [[sink]]
            kind = "tmux"
            alert_duration = ["5s"]
            """, line: 3, key: "sink #1 (tmux).alert_duration", message: "expected a string, found an array"),
        Case(name: "exec monitor without command", toml: """
            [[monitor]]
            kind = "exec"
            role = "reachability"
            """, line: 1, key: "monitor #1 (exec).command", message: "must name a program"),
        Case(name: "wrong element type in an array", toml: """
            [[monitor]]
            kind = "exec"
            command = ["/bin/true", 5]
            """, line: 3, key: "monitor #1 (exec).command.1", message: "expected a string, found an integer"),
        Case(name: "sink written as a table", toml: """
            [sink]
            kind = "log"
            """, line: 1, key: "sink", message: "must be an array of tables: write [[sink]]"),
        Case(name: "syntax error", toml: """
            [debounce]
            down = "2s
            """, line: 2, key: nil, message: "Error while parsing string"),
        Case(name: "second plugin's bad key points at its own line", toml: """
            [[monitor]]
            kind = "exec"
            command = ["/bin/a"]

            [[monitor]]
            kind = "exec"
            command = ["/bin/b"]
            role = "everything"
            """, line: 8, key: "monitor #2 (exec).role", message: "must be \"reachability\" or \"link\""),
    ]

    @Test(arguments: cases)
    func badConfigIsRefusedWithFileLineAndKey(_ c: Case) {
        do {
            _ = try ConfigLoader.load(text: c.toml, file: "/home/u/.config/lifeline/config.toml", parser: .inProcess)
            Issue.record("accepted a bad config: \(c.name)")
        } catch {
            #expect(error.file == "/home/u/.config/lifeline/config.toml")
            #expect(error.line == c.line, "\(error)")
            #expect(error.key == c.key, "\(error)")
            #expect(error.message.contains(c.message), "\(error)")
            // The one line a user reads names all three.
            #expect(error.description.hasPrefix("/home/u/.config/lifeline/config.toml:\(c.line ?? 0): "))
            if let key = c.key { #expect(error.description.contains("'\(key)'")) }
        }
    }

    @Test func missingFileIsAClearError() {
        #expect(throws: ConfigError.self) { try ConfigLoader.load(file: "/nonexistent/lifeline.toml", parser: .inProcess) }
        do { _ = try ConfigLoader.load(file: "/nonexistent/lifeline.toml", parser: .inProcess) } catch {
            #expect(error.description == "/nonexistent/lifeline.toml: no such file")
        }
    }
}
