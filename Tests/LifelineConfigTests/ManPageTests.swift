import Foundation
import LifelineConfig
import LifelineCore
@testable import LifelineDaemon
import Testing

/// lifeline(5) documents every key of every section and plugin kind, and no key
/// the code lacks: each `[debounce]` key and each `.SS kind = "…"` subsection's
/// keys (`.TP` then `.B key`) are compared with the keys the loader reads.
@Suite struct ManPageTests {
    static let page: String = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: repo.appendingPathComponent("packaging/man/lifeline.5"), encoding: .utf8)) ?? ""
    }()

    /// Every documented key's `.B key …` line, with its section ("debounce",
    /// "monitor probe", "sink tmux"); a section with no key is reported with nil.
    static func keyLines() -> [(section: String, line: String?)] {
        var found: [(section: String, line: String?)] = []
        var heading = ""
        var current: String?
        var previous = ""
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(".SH ") {
                heading = String(line.dropFirst(4))
                current = heading == "[debounce]" ? "debounce" : nil
                if let current { found.append((current, nil)) }
            } else if line.hasPrefix(".SS kind = \""), line.hasSuffix("\"") {
                let kind = String(line.dropFirst(".SS kind = \"".count).dropLast())
                let role = heading == "MONITORS" ? "monitor" : heading == "SINKS" ? "sink" : "misplaced"
                current = "\(role) \(kind)"
                found.append(("\(role) \(kind)", nil))
            } else if previous == ".TP", line.hasPrefix(".B "), let section = current {
                found.append((section, line))
            }
            previous = line
        }
        return found
    }

    static func key(in line: String) -> String { String(line.dropFirst(3).prefix { $0 != " " }) }

    /// "debounce", "monitor probe", "sink tmux" → the keys documented there.
    static func documented() -> [String: Set<String>] {
        var sections: [String: Set<String>] = [:]
        for (section, line) in keyLines() {
            sections[section, default: []].formUnion(line.map { [key(in: $0)] } ?? [])
        }
        return sections
    }

    static func codeKeys() -> [String: Set<String>] {
        func keys<M: Monitor>(_ type: M.Type) -> Set<String> { ConfigDecoding.keys(of: M.Config.self) }
        func keys<S: Sink>(_ type: S.Type) -> Set<String> { ConfigDecoding.keys(of: S.Config.self) }
        var result: [String: Set<String>] = ["debounce": ConfigDecoding.keys(of: DebounceSection.self)]
        for m in Registry.monitors { result["monitor \(m.kind)"] = keys(m) }
        for s in Registry.sinks { result["sink \(s.kind)"] = keys(s) }
        return result
    }

    @Test func everyKeyOfEveryKindIsDocumentedAndNothingElse() {
        let page = Self.documented()
        let code = Self.codeKeys()
        #expect(!page.isEmpty, "packaging/man/lifeline.5 not found or empty")
        for (section, keys) in code.sorted(by: { $0.key < $1.key }) {
            guard let documented = page[section] else {
                Issue.record("lifeline(5) has no section for \(section) (a `.SS kind = \"…\"` under MONITORS or SINKS)")
                continue
            }
            #expect(keys.subtracting(documented).isEmpty, "lifeline(5) \(section) lacks \(keys.subtracting(documented).sorted())")
            #expect(documented.subtracting(keys).isEmpty, "lifeline(5) \(section) names keys the code lacks: \(documented.subtracting(keys).sorted())")
        }
        for section in page.keys where code[section] == nil {
            Issue.record("lifeline(5) documents '\(section)', which the code does not have")
        }
    }

    /// "monitor probe" → key → the default lifeline(5) states for it, as written
    /// after "default " in the key's `.B key \fR(…)` line, roff escapes undone; nil
    /// when the page states no literal default (required, unset, a path from the environment).
    static func documentedDefaults() -> [String: [String: String?]] {
        var result: [String: [String: String?]] = [:]
        for (section, line) in keyLines() {
            guard let line else { continue }
            let text = line.replacingOccurrences(of: "\\(dq", with: "\"").replacingOccurrences(of: "\\-", with: "-")
            result[section, default: [:]][key(in: line)] = literalDefault(in: text)
        }
        return result
    }

    /// The TOML value after "default " in `text`: a quoted string, a [list], or a
    /// bare number or boolean; nil if what follows is prose.
    static func literalDefault(in text: String) -> String? {
        guard let range = text.range(of: "default ") else { return nil }
        let rest = text[range.upperBound...]
        // A default taken from the environment ($XDG_…) is prose, worked out at run time.
        if rest.prefix { $0 != "," && $0 != ")" }.contains("$") { return nil }
        if rest.hasPrefix("\"") {
            guard let end = rest.dropFirst().firstIndex(of: "\"") else { return nil }
            return String(rest[...end])
        }
        if rest.hasPrefix("[") {
            guard let end = rest.firstIndex(of: "]") else { return nil }
            return String(rest[...end])
        }
        let word = String(rest.prefix { $0 != "," && $0 != ")" && $0 != " " })
        return Int(word) != nil || word == "true" || word == "false" ? word : nil
    }

    /// The defaults a section's type states, each as `config show` writes it.
    static func codeDefaults() throws -> [String: [String: String]] {
        func rendered(_ value: some Encodable) throws -> [String: String] {
            guard case .table(let table) = try ConfigEncoder.encode(value) else { return [:] }
            return Dictionary(table.entries.map { ($0.key, TOMLText.value($0.value)) }, uniquingKeysWith: { a, _ in a })
        }
        func defaults<M: Monitor>(_ type: M.Type) throws -> [String: String] {
            guard let section = M.Config.self as? any ConfigSection.Type else { return [:] }
            return try rendered(section.defaults)
        }
        func defaults<S: Sink>(_ type: S.Type) throws -> [String: String] {
            guard let section = S.Config.self as? any ConfigSection.Type else { return [:] }
            return try rendered(section.defaults)
        }
        var result = ["debounce": try rendered(DebounceSection.defaults)]
        for m in Registry.monitors { result["monitor \(m.kind)"] = try defaults(m) }
        for s in Registry.sinks { result["sink \(s.kind)"] = try defaults(s) }
        return result
    }

    /// Equal as values: "60s" and "1m" are the same duration.
    static func same(_ code: String?, _ documented: String) -> Bool {
        guard let code else { return false }
        if code == documented { return true }
        func duration(_ text: String) -> Duration? {
            guard text.count > 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
            return try? DurationText.parse(String(text.dropFirst().dropLast()))
        }
        guard let a = duration(code), let b = duration(documented) else { return false }
        return a == b
    }

    /// The default the page states for a key is the one its type has: the page
    /// is written by hand, the types are what runs.
    @Test func everyDocumentedDefaultIsTheCodesDefault() throws {
        let page = Self.documentedDefaults()
        let code = try Self.codeDefaults()
        var compared = 0
        for (section, keys) in page.sorted(by: { $0.key < $1.key }) {
            for (key, documented) in keys.sorted(by: { $0.key < $1.key }) {
                guard let documented else { continue }
                compared += 1
                #expect(Self.same(code[section]?[key], documented),
                        "lifeline(5) [\(section)] \(key): default \(documented), the code's is \(code[section]?[key] ?? "unset")")
            }
        }
        #expect(compared > 20, "read only \(compared) defaults from lifeline(5)")
    }

    @Test func theCheckSeesTheKeysItCompares() {
        // The parser of the page must find the known keys of a known kind, or the
        // check above would pass on a page it cannot read.
        #expect(Self.documented()["monitor netlink"] == ["ignore", "receive_buffer", "networkd_links", "announcement_lifetime"])
        #expect(Self.codeKeys()["sink log"] == ["path", "max_size", "keep"])
    }
}
