/// The plain format in which the TOML-parsing child hands its result to the
/// daemon or CLI that started it. The reader is the only code that touches the
/// child's output, so it treats it as untrusted: every length and count is
/// checked against what is left, nesting is bounded, text must be UTF-8 without
/// NUL, and a problem is an error, never a crash.
///
///     lifeline-config-tree 1
///     ok                        or   error LINE|-   then a string (the message)
///     VALUE
///
/// VALUE is one of `t COUNT` (COUNT × string key, VALUE), `a COUNT` (COUNT × VALUE),
/// `s LEN` + newline + LEN bytes, `i INTEGER`, `f` + 16 hex digits (the bits of a
/// double), `b0`, `b1`, `o` + string (a TOML type Lifeline has no use for: a date);
/// every line ends in a newline.
public enum ConfigWire {
    public static let header = "lifeline-config-tree 1\n"
    /// Deeper than any config; also keeps the reader's recursion shallow.
    public static let maxDepth = 64

    /// What the child found.
    public enum Outcome: Sendable, Equatable {
        case table(ConfigTable)
        case syntaxError(line: Int?, message: String)
    }

    public struct Unreadable: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    // MARK: Writing (in the child)

    public static func write(_ outcome: Outcome) -> [UInt8] {
        var out = Array(header.utf8)
        switch outcome {
        case .table(let table):
            out += Array("ok\n".utf8)
            write(.table(table), into: &out)
        case .syntaxError(let line, let message):
            out += Array("error \(line.map(String.init) ?? "-")\n".utf8)
            write(string: message, tag: "s", into: &out)
        }
        return out
    }

    private static func write(_ value: ConfigValue, into out: inout [UInt8]) {
        switch value {
        case .table(let table):
            out += Array("t\(table.entries.count)\n".utf8)
            for (key, item) in table.entries {
                write(string: key, tag: "s", into: &out)
                write(item, into: &out)
            }
        case .array(let items):
            out += Array("a\(items.count)\n".utf8)
            for item in items { write(item, into: &out) }
        case .string(let s): write(string: s, tag: "s", into: &out)
        case .int(let i): out += Array("i\(i)\n".utf8)
        case .double(let d): out += Array("f\(hex(d.bitPattern))\n".utf8)
        case .bool(let b): out += Array(b ? "b1\n".utf8 : "b0\n".utf8)
        case .other(let name): write(string: name, tag: "o", into: &out)
        }
    }

    private static func write(string: String, tag: Character, into out: inout [UInt8]) {
        out += Array("\(tag)\(string.utf8.count)\n".utf8)
        out += Array(string.utf8)
        out.append(UInt8(ascii: "\n"))
    }

    private static func hex(_ bits: UInt64) -> String {
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    // MARK: Reading (in the parent)

    public static func read(_ bytes: some Collection<UInt8>) throws(Unreadable) -> Outcome {
        var reader = Reader(bytes: Array(bytes))
        try reader.expect(header)
        let status = try reader.line()
        let outcome: Outcome
        if status == "ok" {
            guard case .table(let table) = try reader.value(depth: 0) else {
                throw Unreadable(description: "the document is not a table")
            }
            outcome = .table(table)
        } else if status.hasPrefix("error ") {
            let place = status.dropFirst("error ".count)
            var line: Int?
            if place != "-" {
                guard let n = Int(place), n > 0 else { throw Unreadable(description: "bad error line '\(place)'") }
                line = n
            }
            outcome = .syntaxError(line: line, message: try reader.string(tag: "s"))
        } else {
            throw Unreadable(description: "unknown status '\(status.prefix(40))'")
        }
        guard reader.atEnd else { throw Unreadable(description: "unexpected bytes after the document") }
        return outcome
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func expect(_ text: String) throws(Unreadable) {
            let want = Array(text.utf8)
            guard bytes.count - offset >= want.count, Array(bytes[offset..<offset + want.count]) == want else {
                throw Unreadable(description: "it does not start with '\(text.dropLast())'")
            }
            offset += want.count
        }

        /// The bytes up to the next newline (consumed), as ASCII text.
        mutating func line() throws(Unreadable) -> String {
            guard let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw Unreadable(description: "it ends in the middle of a line")
            }
            // Only short ASCII lines are expected here (tags, numbers).
            guard end - offset <= 64, bytes[offset..<end].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw Unreadable(description: "a malformed line at byte \(offset)")
            }
            let text = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = end + 1
            return text
        }

        mutating func count(_ text: Substring) throws(Unreadable) -> Int {
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(text),
                  n <= bytes.count - offset
            else {
                throw Unreadable(description: "a bad count '\(text.prefix(20))' at byte \(offset)")
            }
            return n
        }

        mutating func string(tag: Character) throws(Unreadable) -> String {
            let head = try line()
            guard head.first == tag else { throw Unreadable(description: "expected a string at byte \(offset)") }
            let length = try count(head.dropFirst())
            guard length < bytes.count - offset, bytes[offset + length] == UInt8(ascii: "\n") else {
                throw Unreadable(description: "a string runs past the end")
            }
            let body = bytes[offset..<offset + length]
            guard let text = String(validating: body, as: UTF8.self) else {
                throw Unreadable(description: "a string is not UTF-8")
            }
            // TOMLKit hands strings over as C strings, so a config string never has
            // one; a program argument or a path with one would be cut short.
            guard !body.contains(0) else { throw Unreadable(description: "a string contains a NUL character") }
            offset += length + 1
            return text
        }

        mutating func value(depth: Int) throws(Unreadable) -> ConfigValue {
            guard depth < ConfigWire.maxDepth else {
                throw Unreadable(description: "values nested more than \(ConfigWire.maxDepth) deep")
            }
            guard offset < bytes.count else { throw Unreadable(description: "it ends where a value should be") }
            switch bytes[offset] {
            case UInt8(ascii: "s"): return .string(try string(tag: "s"))
            case UInt8(ascii: "o"): return .other(typeName: try string(tag: "o"))
            case UInt8(ascii: "t"):
                let n = try count(try line().dropFirst())
                var table = ConfigTable()
                var seen = Set<String>()
                for _ in 0..<n {
                    let key = try string(tag: "s")
                    guard seen.insert(key).inserted else { throw Unreadable(description: "key '\(key.prefix(40))' appears twice") }
                    table.entries.append((key, try value(depth: depth + 1)))
                }
                return .table(table)
            case UInt8(ascii: "a"):
                let n = try count(try line().dropFirst())
                var items: [ConfigValue] = []
                for _ in 0..<n { items.append(try value(depth: depth + 1)) }
                return .array(items)
            default:
                let text = try line()
                let body = text.dropFirst()
                switch text.first {
                case "i":
                    let digits = body.hasPrefix("-") ? body.dropFirst() : body
                    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let i = Int(body) else {
                        throw Unreadable(description: "a bad integer '\(body.prefix(24))'")
                    }
                    return .int(i)
                case "f":
                    guard body.count == 16, let bits = UInt64(body, radix: 16) else {
                        throw Unreadable(description: "a bad float '\(body.prefix(24))'")
                    }
                    return .double(Double(bitPattern: bits))
                case "b" where body == "0": return .bool(false)
                case "b" where body == "1": return .bool(true)
                default: throw Unreadable(description: "an unknown value '\(text.prefix(24))'")
                }
            }
        }
    }
}
