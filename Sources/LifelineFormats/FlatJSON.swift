/// A reader for one JSON object whose members are strings, numbers, booleans or
/// null (nested values are passed on as their raw text, unread, so a newer
/// writer may add them and a reader that wants one parses it again). Small on
/// purpose: it is on the path of every `lifeline status`.
public enum FlatJSON {
    public enum Value: Sendable, Equatable {
        case string(String)
        /// The number's text, exactly as written.
        case number(String)
        case bool(Bool)
        case null
        /// An object or array, as its text (brackets included).
        case nested([UInt8])

        public var int64: Int64? {
            guard case .number(let text) = self else { return nil }
            return Int64(text)
        }

        public var double: Double? {
            guard case .number(let text) = self else { return nil }
            return Double(text)
        }
    }

    public static func parse(_ bytes: [UInt8]) -> [String: Value]? {
        var out: [String: Value] = [:]
        return forEachMember(bytes) { out[$0] = $1 } ? out : nil
    }

    /// Calls `body` for each member in order; false when the text is not one
    /// well-formed object (members already seen were still passed to `body`).
    public static func forEachMember(_ bytes: [UInt8], _ body: (String, Value) -> Void) -> Bool {
        var reader = Reader(bytes: bytes)
        return reader.object(body)
    }

    private struct Reader {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func object(_ body: (String, Value) -> Void) -> Bool {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if take(UInt8(ascii: "}")) { return atEnd() }
            while true {
                skipSpace()
                guard let key = string() else { return false }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return false }
                skipSpace()
                guard let value = value() else { return false }
                body(key, value)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return false }
                return atEnd()
            }
        }

        private mutating func atEnd() -> Bool {
            skipSpace()
            return i == bytes.count
        }

        private mutating func value() -> Value? {
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let start = i
                return skipNested() ? .nested(Array(bytes[start..<i])) : nil
            default: return number()
            }
        }

        private mutating func number() -> Value? {
            let start = i
            while i < bytes.count, Self.isNumberByte(bytes[i]) { i += 1 }
            guard i > start else { return nil }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            guard Double(text) != nil else { return nil }
            return .number(text)
        }

        private static func isNumberByte(_ b: UInt8) -> Bool {
            (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
        }

        private mutating func literal(_ word: String) -> Bool {
            var k = i
            for b in word.utf8 {
                guard k < bytes.count, bytes[k] == b else { return false }
                k += 1
            }
            i = k
            return true
        }

        /// Skips a nested object or array, strings included, to its matching bracket.
        private mutating func skipNested() -> Bool {
            var depth = 0
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    guard depth <= 64 else { return false }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        i += 1
                        return true
                    }
                default: break
                }
                i += 1
            }
            return false
        }

        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var scalars = String.UnicodeScalarView()
            let start = i
            var run = i  // start of a stretch without escapes
            func flush(_ end: Int) {
                scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars)
            }
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    // Most strings hold no escape: decoded at once, without the scalar view
                    // (reading a long log for `history --report` spent most of its time there).
                    if run == start {
                        defer { i += 1 }
                        return String(decoding: bytes[start..<i], as: UTF8.self)
                    }
                    flush(i)
                    i += 1
                    return String(scalars)
                }
                if b < 0x20 { return nil }
                guard b == UInt8(ascii: "\\") else {
                    i += 1
                    continue
                }
                flush(i)
                i += 1
                guard i < bytes.count else { return nil }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by an escaped low one.
                        guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(),
                              (0xDC00..<0xE000).contains(low) else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    scalars.append(scalar)
                default: return nil
                }
                run = i
            }
            return nil
        }

        private mutating func hex4() -> UInt32? {
            guard i + 4 <= bytes.count else { return nil }
            var v: UInt32 = 0
            for k in 0..<4 {
                let b = bytes[i + k]
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            i += 4
            return v
        }

        private mutating func take(_ b: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == b else { return false }
            i += 1
            return true
        }

        private mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }
    }
}
