import LifelineCore

/// Finds the line of a key in TOML text. TOMLKit reports lines for syntax errors
/// only, so for "wrong type" and "unknown key" errors we look the key up here.
///
/// It reads the text the way a person does: `[table]` and `[[array]]` headers
/// set the current path, `key = value` lines define keys under it. Good enough
/// for config files; a key it cannot place falls back to its table's header.
public struct SourceLocator: Sendable {
    private var lines: [String: Int] = [:]

    public init(text: String) {
        var arrayCounts: [String: Int] = [:]
        var prefix = ""
        var inMultilineString = false
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.trimmingSpaces()
            let tripleQuotes = line.components(of: "\"\"\"") + line.components(of: "'''")
            if inMultilineString {
                if tripleQuotes % 2 == 1 { inMultilineString = false }
                continue
            }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[[") {
                let name = Self.headerName(line.dropFirst(2))
                let index = arrayCounts[name, default: 0]
                arrayCounts[name] = index + 1
                prefix = "\(name).\(index)"
                lines[prefix] = number
            } else if line.hasPrefix("[") {
                prefix = Self.headerName(line.dropFirst())
                lines[prefix] = lines[prefix] ?? number
            } else if let eq = line.firstIndex(of: "=") {
                let key = Self.keyPath(line[..<eq])
                let full = prefix.isEmpty ? key : "\(prefix).\(key)"
                lines[full] = lines[full] ?? number
                if tripleQuotes % 2 == 1 { inMultilineString = true }
            }
        }
    }

    private static func headerName(_ s: Substring) -> String {
        keyPath(s.prefix { $0 != "]" })
    }

    private static func keyPath(_ s: Substring) -> String {
        s.split(separator: ".").map { part in
            var p = part.trimmingSpaces()
            if p.count >= 2, let f = p.first, f == "\"" || f == "'", p.last == f { p = p.dropFirst().dropLast() }
            return String(p)
        }.joined(separator: ".")
    }

    /// The line of `path` (components joined by "."; array items by their index),
    /// or of the nearest enclosing table that has one.
    public func line(of path: [String]) -> Int? {
        var path = path
        while !path.isEmpty {
            if let n = lines[path.joined(separator: ".")] { return n }
            path.removeLast()
        }
        return nil
    }
}

extension Substring {
    func components(of needle: String) -> Int {
        var count = 0
        var rest = self
        while let r = rest.range(of: needle) {
            count += 1
            rest = rest[r.upperBound...]
        }
        return count
    }

    func range(of needle: String) -> Range<Index>? {
        guard !needle.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(needle) { return i..<(index(i, offsetBy: needle.count)) }
            i = index(after: i)
        }
        return nil
    }
}
