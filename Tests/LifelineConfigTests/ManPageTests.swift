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

    /// "debounce", "monitor probe", "sink tmux" → the keys documented there.
    static func documented() -> [String: Set<String>] {
        var sections: [String: Set<String>] = [:]
        var heading = ""
        var current: String?
        var previous = ""
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(".SH ") {
                heading = String(line.dropFirst(4))
                current = heading == "[debounce]" ? "debounce" : nil
            } else if line.hasPrefix(".SS kind = \""), line.hasSuffix("\"") {
                let kind = String(line.dropFirst(".SS kind = \"".count).dropLast())
                let role = heading == "MONITORS" ? "monitor" : heading == "SINKS" ? "sink" : "misplaced"
                current = "\(role) \(kind)"
            } else if previous == ".TP", line.hasPrefix(".B "), let section = current {
                let key = line.dropFirst(3).prefix { $0 != " " }
                sections[section, default: []].insert(String(key))
            }
            if let section = current, sections[section] == nil { sections[section] = [] }
            previous = line
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

    @Test func theCheckSeesTheKeysItCompares() {
        // The parser of the page must find the known keys of a known kind, or the
        // check above would pass on a page it cannot read.
        #expect(Self.documented()["monitor netlink"] == ["ignore", "receive_buffer"])
        #expect(Self.codeKeys()["sink log"] == ["path", "max_size", "keep"])
    }
}
