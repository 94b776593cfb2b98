import CIntl
import Glibc

/// The sentences people read (the toast, the `status` and `watch` lines,
/// `diagnose`) in their language, through glibc's gettext: `LANGUAGE`,
/// `LC_ALL`, `LC_MESSAGES` and `LANG` choose it as for every other program on
/// the desktop. What programs read (JSON, the event log, D-Bus, `--format`
/// templates) stays English: they call nothing here.
///
/// Messages name their values, `"The network on {connection} does not reach
/// the internet."`, and the values are put in after the lookup: a translation
/// may move them anywhere in the sentence (Persian and Korean put the verb last).
///
/// `Translator.english` writes the messages as they are in the source: the
/// English sentences, byte for byte, from the same code that writes the others.
public struct Translator: Sendable {
    /// A catalog for the user's language was found: messages come out translated.
    /// False for English, and wherever no catalog matches (the sentences then stay English).
    public let isTranslating: Bool
    /// Messages from a table instead of gettext's catalog (tests); nil: gettext.
    private let table: [String: String]?

    /// The messages as written in the source.
    public static let english = Translator(isTranslating: false, table: nil)

    /// Messages from `table` (msgid → translation; a plural's msgid → its one
    /// form), the msgid where it has none: sentences built without a catalog.
    public init(table: [String: String]) {
        self.isTranslating = true
        self.table = table
    }

    private init(isTranslating: Bool, table: [String: String]?) {
        self.isTranslating = isTranslating
        self.table = table
    }

    /// The catalog domain: `<localedir>/<language>/LC_MESSAGES/lifeline.mo`.
    public static let domain = "lifeline"

    /// The user's language, set up on first use, once per process.
    public static var user: Translator { Translator(isTranslating: catalogLoaded, table: nil) }

    private static let catalogLoaded: Bool = setUp()

    /// The message `msgid` in the user's language, `values` put in place of each `{name}`.
    public func tr(_ msgid: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
        guard isTranslating else { return Self.fill(msgid, values) }
        return Self.fill(table.map { $0[msgid] ?? msgid } ?? Self.lookup(msgid), values)
    }

    /// A message that depends on a count (`{count}` among `values` is up to the caller):
    /// each language has its own plural rules, carried by its catalog.
    public func trn(_ singular: String, _ plural: String, _ count: Int,
                    _ values: KeyValuePairs<String, String> = [:]) -> String {
        let message: String
        if let table {
            message = table[singular] ?? (count == 1 ? singular : plural)
        } else if isTranslating {
            let n = UInt(clamping: count)
            message = dngettext(Self.domain, singular, plural, n).map { String(cString: $0) } ?? plural
        } else {
            message = count == 1 ? singular : plural
        }
        return Self.fill(message, values)
    }

    /// Each `{name}` of `message` that `values` names, replaced by its value, in one
    /// pass: a value that itself contains `{…}` (an interface or a reason from the
    /// network) is never read as a placeholder. Other braces stay as written.
    public static func fill(_ message: String, _ values: KeyValuePairs<String, String>) -> String {
        guard !values.isEmpty, message.contains("{") else { return message }
        var out = ""
        var rest = Substring(message)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = rest[rest.index(after: open)..<close]
            if let value = values.first(where: { $0.key == name })?.value {
                out += value
            } else {
                out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// The names of the placeholders in `message`, in order (for checking a catalog).
    public static func placeholders(_ message: String) -> [String] {
        var names: [String] = []
        var rest = Substring(message)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    private static func lookup(_ msgid: String) -> String {
        dgettext(domain, msgid).map { String(cString: $0) } ?? msgid
    }

    /// Reads the user's locale and binds the catalog folder; true when a catalog
    /// for the user's language answers. Only the messages category is set: the
    /// numeric one would make C libraries write and read "1,5" for 1.5 in a German
    /// session (JSON, TOML, the probe's timings), and the character type is not
    /// needed once the catalog's output is bound to UTF-8 (loading it costs `status`
    /// two more files).
    private static func setUp() -> Bool {
        _ = setlocale(LC_MESSAGES, "")
        _ = bindtextdomain(domain, localeDirectory())
        _ = bind_textdomain_codeset(domain, "UTF-8")
        // The empty msgid is a catalog's header: empty when no catalog was found.
        guard let header = dgettext(domain, "") else { return false }
        return header.pointee != 0
    }

    /// `LIFELINE_LOCALEDIR` when set (tests); else beside the running binary: the
    /// installed layout (`bin/` or `libexec/lifeline/` under a prefix, catalogs in
    /// `share/locale`) or the build folder (`.build/<triple>/<config>/`, catalogs
    /// in `.build/locale`, where `make` compiles them). Binaries are built once
    /// and installed under any prefix, so the folder is found, not compiled in.
    static func localeDirectory() -> String {
        if let dir = getenv("LIFELINE_LOCALEDIR"), dir.pointee != 0 { return String(cString: dir) }
        let binary = Files.directory(of: executablePath())
        for candidate in ["/../share/locale", "/../../share/locale", "/../../locale"] {
            var info = stat()
            if stat(binary + candidate, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return binary + candidate }
        }
        return "/usr/share/locale"
    }

    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments.first ?? "" }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
