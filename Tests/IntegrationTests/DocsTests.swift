import Foundation
import LifelineDaemon
import Testing

/// The documents say what the code does. These fail when they drift: a path
/// that moved, a thread the design's table does not know (or one it names that
/// is gone), a README number that is not the benchmark table's.
@Suite struct DocsTests {
    static let repo = PackagingTests.repo

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repo.appendingPathComponent(path), encoding: .utf8)
    }

    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: repo.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: repo.appendingPathComponent(path).path)
    }

    /// Every name in backticks that reads as a path in this repository: a folder
    /// of ours first (`Sources/…`, `bench/…`), or a target's folder
    /// (`LifelineCore/Bus.swift`), or a source file by its name alone.
    @Test func everyPathInBackticksExists() throws {
        let top = ["Sources", "Plugins", "Tests", "packaging", "docs", "bench", "scripts", "fuzz", "po", ".ci"]
        let folders = ["Sources", "Plugins/Monitors", "Plugins/Sinks"]
        let targets = Set(folders.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: Self.repo.appendingPathComponent($0).path)) ?? [] })
        let fileNames = Set(try Harness.run(["git", "-C", Self.repo.path, "ls-files"]).stdout.split(separator: "\n").map { String($0.split(separator: "/").last ?? "") })
        var missing: [String] = []
        for document in Self.documents {
            for (number, line) in try Self.read(document).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for token in Self.backticked(String(line)) {
                    let path = String(token.split(separator: ":").first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: ".,;"))
                    // Placeholders, globs, variables, absolute and home paths are not files of ours.
                    guard !path.contains(where: { "<>*${}()=?&|'\"~ ".contains($0) }), !path.hasPrefix("/"), !path.contains("://") else { continue }
                    let parts = path.split(separator: "/").map(String.init)
                    if parts.count > 1, let first = parts.first, top.contains(first) || targets.contains(first) {
                        let found = [path] + folders.map { "\($0)/\(path)" }
                        if !found.contains(where: Self.exists) { missing.append("\(document):\(number + 1): `\(path)`") }
                    } else if parts.count == 1, [".swift", ".c", ".h", ".py"].contains(where: path.hasSuffix), !fileNames.contains(path) {
                        missing.append("\(document):\(number + 1): `\(path)`")
                    }
                }
            }
        }
        #expect(missing.isEmpty, "paths in the docs that do not exist:\n\(missing.joined(separator: "\n"))")
    }

    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The names in backticks in the first column of `docs/design.md`'s thread table.
    static func threadTable() throws -> [String] {
        let design = try read("docs/design.md")
        let section = design.components(separatedBy: "## Threads, and what may block").dropFirst().first ?? ""
        var names: [String] = []
        for line in section.split(separator: "\n", omittingEmptySubsequences: false).drop(while: { !$0.hasPrefix("|") }) {
            guard line.hasPrefix("|") else { break }
            let first = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().first ?? ""
            // Thread names only: `https://` in a row's note is not one.
            names += backticked(String(first)).filter { $0.allSatisfy { $0.isLetter || $0.isNumber || "._-".contains($0) } }
        }
        return names
    }

    /// The threads of a daemon running the default monitors and sinks, with a
    /// Prometheus file as well, on a private session bus.
    @Test(.requires(.tools(["dbus-daemon"])))
    func theThreadTableNamesEveryThreadOfARunningDaemonAndNoOther() async throws {
        let bus = try PrivateBus()
        defer { bus.kill() }
        let daemon = try DaemonFixture(extraEnvironment: bus.environment)
        try daemon.writeConfig(DefaultConfig.toml + "\n[[sink]]\nkind = \"prometheus\"\npath = \"\(daemon.path("lifeline.prom"))\"\n")
        try daemon.start()
        defer { Task { await daemon.stop() } }
        let pid = try #require(daemon.process?.pid)
        // Every plugin has started once the `dbus` sink published and the Prometheus file is written.
        try await Harness.waitUntil(timeout: .seconds(20)) { FileManager.default.fileExists(atPath: daemon.path("lifeline.prom")) }
        let running = Set(ThreadSwitches(pid: pid).names.values)
        await daemon.stop()

        let table = try Self.threadTable()
        // The kernel keeps the first 15 bytes of a thread's name.
        let tabled = Set(table.map { String($0.prefix(15)) })
        let untabled = running.subtracting(tabled)
        #expect(untabled.isEmpty, "threads of a running daemon that docs/design.md's thread table does not name: \(untabled.sorted())")

        // Names given to threads (`SerialThread(name:)`, `MainLoopThread(name:)`, `threadName:`).
        let sources = try Harness.run(["git", "-C", Self.repo.path, "grep", "-h", "-o", "-E", "[nN]ame: \"[A-Za-z0-9._-]+\"", "--", "Sources", "Plugins"]).stdout
        let named = Set(sources.split(separator: "\n").compactMap { $0.split(separator: "\"").dropFirst().first.map(String.init) })
        // Threads the libraries start and name: GLib's (for GDBus) and libdispatch's
        // (swift-service-lifecycle's signal sources); GLib's pool thread comes and goes.
        let theirs: Set = ["gdbus", "gmain", "pool", "-qos.overcommit"]
        let gone = table.filter { !named.contains($0) && !theirs.contains($0) && !running.contains(String($0.prefix(15))) }
        #expect(gone.isEmpty, "docs/design.md's thread table names threads nothing makes: \(gone)")
    }

    /// A README cell that quotes the benchmark table marks where: a comment
    /// `<!-- bench: MEASURE -->` right after the numbers, MEASURE being (part
    /// of) the table row's "measure" column. Each number before the comment, in
    /// the same cell, is one of that row's result numbers, rounded as written.
    @Test func theReadmesNumbersAreTheBenchmarkTables() throws {
        let readme = try Self.read("README.md")
        let rows = try Self.benchmarkRows()
        var wrong: [String] = []
        var quoted = 0
        for line in readme.split(separator: "\n") {
            var rest = Substring(line)
            while let open = rest.range(of: "<!-- bench: "), let close = rest[open.upperBound...].range(of: " -->") {
                let key = String(rest[open.upperBound..<close.lowerBound])
                let before = rest[..<open.lowerBound]
                // The numbers since the cell, the clause or the parenthesis began.
                let clause = before.split(omittingEmptySubsequences: false, whereSeparator: { "|;(".contains($0) }).last ?? before
                let numbers = Self.numbers(in: String(clause))
                rest = rest[close.upperBound...]
                quoted += 1
                guard let row = rows.first(where: { $0.measure.contains(key) }) else {
                    wrong.append("no row of docs/benchmarks.md measures '\(key)'")
                    continue
                }
                let results = Self.numbers(in: row.result)
                for number in numbers where !results.contains(where: { Self.rounds($0, to: number) }) {
                    wrong.append("README says \(number.text) for '\(key)'; the table says '\(row.result)'")
                }
            }
        }
        #expect(quoted >= 5, "the README marks no numbers it quotes from the benchmark table")
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    struct Number {
        var value: Double
        var decimals: Int
        var text: String
    }

    static func numbers(in text: String) -> [Number] {
        var found: [Number] = []
        var current = ""
        func flush() {
            let trimmed = current.hasSuffix(".") ? String(current.dropLast()) : current
            if let value = Double(trimmed), !trimmed.isEmpty {
                let decimals = trimmed.split(separator: ".").dropFirst().first?.count ?? 0
                found.append(Number(value: value, decimals: decimals, text: trimmed))
            }
            current = ""
        }
        for c in text {
            if c.isASCII, c.isNumber || (c == "." && !current.isEmpty) { current.append(c) } else { flush() }
        }
        flush()
        return found
    }

    /// Whether `precise` written with `written`'s decimals reads as `written`
    /// (0.705 as 0.71 or 0.70: a half is either way in binary).
    static func rounds(_ precise: Number, to written: Number) -> Bool {
        let scale = pow(10, Double(written.decimals))
        return abs(precise.value * scale - written.value * scale) <= 0.5 + 1e-9
    }

    static func benchmarkRows() throws -> [(measure: String, result: String)] {
        let page = try read("docs/benchmarks.md")
        let table = page.components(separatedBy: "<!-- bench-table:begin -->").dropFirst().first?.components(separatedBy: "<!-- bench-table:end -->").first ?? ""
        return table.split(separator: "\n").filter { $0.hasPrefix("| ") }.compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            // "area: measure", so that a measure two areas share is told apart.
            return cells.count > 3 ? ("\(cells[1]): \(cells[2])", cells[3]) : nil
        }
    }
}
