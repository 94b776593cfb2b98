import Foundation
import Glibc
import LifelineConfig
import Testing

/// The parent's side of parsing in a child: whatever the child does (crash,
/// hang, fail, print garbage or far too much, exit without reading), the parent
/// gets a `ConfigError` naming the file, and is never hurt (no SIGPIPE, no hang,
/// no child left behind). Small system programs stand in for a broken child.
@Suite(.serialized) struct IsolatedParserTests {
    let file = "/home/u/.config/lifeline/config.toml"
    let text = "[debounce]\ndown = \"2s\"\n"

    func failure(_ parser: TOMLParser, _ text: String? = nil) -> ConfigError? {
        do {
            _ = try parser.parse(text ?? self.text, file: file)
            return nil
        } catch {
            return error
        }
    }

    @Test func aChildThatCrashesIsAnErrorOnItsLine() throws {
        // Crashes only once it has read a line with an ampersand, like toml++ on "[&".
        let parser = TOMLParser.isolated(executable: "/bin/sh", arguments: ["-c", "grep -q '&' && kill -ABRT $$; exit 0"])
        let error = try #require(failure(parser, "a = 1\nb = 2\n[&\nc = 3\n"))
        #expect(error.file == file)
        #expect(error.line == 3, "\(error)")
        #expect(error.message.hasPrefix("the TOML parser failed on this line (it was stopped by signal 6, Aborted)"), "\(error)")
    }

    @Test func aChildThatHangsIsKilledAtTheDeadline() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(failure(.isolated(executable: "/bin/sleep", arguments: ["30"], timeout: .milliseconds(300))))
        #expect(clock.now - start < .seconds(5))
        #expect(error.description == "\(file): the TOML parser did not finish within 300ms")
        // Killed and reaped: no `sleep` child of ours is left, not even a zombie.
        #expect(childCommands().contains("sleep") == false, "\(childCommands())")
    }

    /// The command names of this process's children, from /proc.
    func childCommands() -> [String] {
        let me = getpid()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard Int32(entry) != nil,
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == me else { return nil }
            return String(stat[stat.index(after: open)..<close])
        }
    }

    @Test func aChildThatFailsOrPrintsGarbageIsAnError() throws {
        let failed = try #require(failure(.isolated(executable: "/bin/sh", arguments: ["-c", "echo 'no such thing' >&2; exit 3"])))
        #expect(failed.description == "\(file): the TOML parser could not run (exit status 3): no such thing")
        let garbage = try #require(failure(.isolated(executable: "/bin/cat", arguments: [])))
        #expect(garbage.message.hasPrefix("the TOML parser's answer is unreadable: it does not start with"), "\(garbage)")
        let flood = try #require(failure(.isolated(executable: "/bin/sh", arguments: ["-c", "cat >/dev/null; head -c 50000000 /dev/zero"])))
        #expect(flood.message == "the TOML parser's answer is too large", "\(flood)")
        let missing = try #require(failure(.isolated(executable: "/nonexistent/lifeline-cli", arguments: [])))
        #expect(missing.message.hasPrefix("the TOML parser could not start"), "\(missing)")
    }

    @Test func aChildThatExitsWithoutReadingCannotRaiseSIGPIPE() throws {
        // A megabyte of input the child never reads: the parent's writes fail, quietly.
        let answer = #"printf 'lifeline-config-tree 1\nok\nt1\ns1\nk\nb1\n'"#
        let parser = TOMLParser.isolated(executable: "/bin/sh", arguments: ["-c", answer])
        let big = String(repeating: "# filler\n", count: 110_000)
        let table = try parser.parse(big, file: file)
        #expect(table == ConfigTable([("k", .bool(true))]))
    }

    @Test func aChildSyntaxErrorKeepsItsLine() throws {
        let answer = #"cat >/dev/null; printf 'lifeline-config-tree 1\nerror 2\ns13\nbad character\n'"#
        let error = try #require(failure(.isolated(executable: "/bin/sh", arguments: ["-c", answer])))
        #expect(error.description == "\(file):2: bad character")
    }
}
