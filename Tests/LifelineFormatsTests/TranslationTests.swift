import LifelineCore
import LifelineFormats
import LifelinePlatform
import Testing

/// The catalogs under po/ and the sentences made with them.
@Suite struct TranslationTests {
    static let repo: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/LifelineCoreTests/TranslationTests.swift
        return parts.joined(separator: "/")
    }()

    static func read(_ path: String) throws -> String {
        let bytes = try #require(Files.readOwnFile(path, limit: 1 << 20), "cannot read \(path)")
        return String(decoding: bytes, as: UTF8.self)
    }

    static var catalogs: [String] { ["ko", "fa"] }

    @Test(arguments: catalogs) func everyMessageIsTranslatedWithTheSamePlaceholders(language: String) throws {
        let text = try Self.read("\(Self.repo)/po/\(language).po")
        #expect(Catalog.problems(in: text) == [])
        // Every message the code asks for (the template xgettext made) is in the catalog.
        let wanted = Catalog.entries(in: try Self.read("\(Self.repo)/po/lifeline.pot")).map(\.msgid)
        let present = Set(Catalog.entries(in: text).map(\.msgid))
        #expect(wanted.filter { !present.contains($0) } == [])
        #expect(wanted.count > 50)
    }

    /// The check itself: each way a translator can break a message is named.
    @Test func aBrokenCatalogIsCaught() {
        let broken = #"""
            msgid ""
            msgstr "Content-Type: text/plain; charset=UTF-8\n"

            msgid "Offline"
            msgstr ""

            msgid "The network on {connection} does not reach the internet."
            msgstr "네트워크가 인터넷에 연결되지 않습니다."

            msgid "{state} via {connection}"
            msgstr "{connexion}에서 {state}"

            msgid "{count} command waiting for the network."
            msgid_plural "{count} commands waiting for the network."
            msgstr[0] "명령이 "
            "네트워크를 기다리고 있습니다."
            """#
        #expect(Catalog.problems(in: broken) == [
            "\"Offline\": not translated",
            "\"The network on {connection} does not reach the internet.\": placeholders [] instead of [\"connection\"]",
            "\"{state} via {connection}\": placeholders [\"connexion\", \"state\"] instead of [\"connection\", \"state\"]",
            "\"{count} command waiting for the network.\": placeholders [] instead of [\"count\"]",
        ])
    }

    /// Korean puts the connection first and the state after it: the values follow
    /// their names wherever the translation puts them.
    @Test func theLineForAPersonInKorean() throws {
        let ko = Translator(table: Catalog.table(try Self.read("\(Self.repo)/po/ko.po")))
        var e = StateEvent(state: .limited, previous: .online, since: 0, interface: "wlan0", kind: .wifi,
                           reason: "DNS (10.0.0.1) did not answer for nmcheck.gnome.org within 5s", sequence: 4)
        e.diagnosis = .dns
        #expect(StatusFormat.plainLine(e, now: 125_000_000, translator: ko)
            == "wlan0 (Wi-Fi)에서 인터넷 없음, 2분 5초째: DNS 서버가 응답하지 않습니다")
        // What programs read stays English.
        #expect(StatusFormat.output(e, format: nil, json: true, translator: ko).contains(#""state":"limited""#))
        #expect(StatusFormat.output(e, format: "{state} {kind}", json: false, translator: ko) == "limited wifi")
        #expect(StatusFormat.plainLine(e, now: 125_000_000)
            == "limited via wlan0 (wifi) for 2m 5s: DNS (10.0.0.1) did not answer for nmcheck.gnome.org within 5s")
    }

    @Test func theLineForAPersonInPersian() throws {
        let fa = Translator(table: Catalog.table(try Self.read("\(Self.repo)/po/fa.po")))
        let e = StateEvent(state: .online, previous: .limited, since: 0, interface: "eth0", kind: .ethernet,
                           reason: "probe answered in 23 ms", rttMs: 23.4, metered: true, sequence: 5, connection: "Office")
        #expect(WatchFormat.plain.line(e, now: 3_720_000_000, translator: fa)
            == "برخط از طریق Office (سیمی، حجمی): زمان پاسخ 23 میلی‌ثانیه")
        #expect(StatusFormat.plainLine(e, now: 3_720_000_000, translator: fa)
            == "برخط از طریق Office (سیمی، حجمی) به مدت 1 ساعت و 2 دقیقه: زمان پاسخ 23 میلی‌ثانیه")
    }

    /// A value is put in once: text from outside that looks like a placeholder stays text.
    @Test func valuesAreNeverReadAsPlaceholders() {
        let t = Translator(table: ["{state} via {connection}": "{connection} → {state}"])
        #expect(t.tr("{state} via {connection}", ["state": "{connection}", "connection": "{state}"]) == "{state} → {connection}")
        #expect(Translator.english.tr("{a} and {b}", ["a": "1"]) == "1 and {b}")
    }

    @Test func englishDurationsAreTheHumanOnes() {
        for seconds: Int64 in [0, 1, 59, 60, 61, 133, 3599, 3600, 3660, 7500, 90000] {
            #expect(Translator.english.duration(.seconds(seconds)) == DurationText.human(.seconds(seconds)))
        }
    }
}

/// Just enough of the PO format to check a catalog: entries, their plural forms,
/// continued strings and the escapes msgfmt accepts.
enum Catalog {
    struct Entry {
        var msgid = ""
        var plural: String?
        var msgstr: [String] = []
    }

    static func entries(in text: String) -> [Entry] {
        var out: [Entry] = []
        var current = Entry()
        var field = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingSpaces()
            if line.hasPrefix("#") || line.isEmpty { continue }
            let value: String
            if line.hasPrefix("\"") {
                value = unquote(line)  // a continued string
            } else {
                let keyword = String(line.prefix { $0 != " " })
                value = unquote(line.dropFirst(keyword.count).trimmingSpaces())
                if keyword == "msgid" {
                    out.append(current)
                    current = Entry()
                }
                field = keyword.hasPrefix("msgstr") ? "msgstr" : keyword
                if field == "msgstr" { current.msgstr.append("") }
                if field == "msgid_plural" { current.plural = "" }
            }
            switch field {
            case "msgid": current.msgid += value
            case "msgid_plural": current.plural! += value
            case "msgstr": current.msgstr[current.msgstr.count - 1] += value
            default: break
            }
        }
        out.append(current)
        return out.filter { !$0.msgid.isEmpty }
    }

    /// What is wrong with each message: untranslated, or placeholders that differ from the msgid's.
    static func problems(in text: String) -> [String] {
        entries(in: text).compactMap { e in
            if e.msgstr.isEmpty || e.msgstr.contains(where: \.isEmpty) { return "\"\(e.msgid)\": not translated" }
            let expected = Translator.placeholders(e.msgid).sorted()
            for form in e.msgstr where Translator.placeholders(form).sorted() != expected {
                return "\"\(e.msgid)\": placeholders \(Translator.placeholders(form).sorted()) instead of \(expected)"
            }
            return nil
        }
    }

    /// msgid → the (first) translation.
    static func table(_ text: String) -> [String: String] {
        Dictionary(entries(in: text).map { ($0.msgid, $0.msgstr.first ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    private static func unquote(_ s: Substring) -> String {
        guard s.count >= 2, s.first == "\"", s.last == "\"" else { return String(s) }
        var out = ""
        var escaped = false
        for c in s.dropFirst().dropLast() {
            if escaped {
                out.append(c == "n" ? "\n" : c == "t" ? "\t" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }
}
