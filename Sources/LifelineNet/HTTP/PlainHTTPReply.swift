/// Reads one HTTP/1.x response from the bytes of a connection as they arrive,
/// the way the probe used libcurl: the status line, the header lines of the
/// final response (a `1xx` before it is skipped), and the body framed by
/// `Content-Length`, `chunked` or the end of the connection, kept up to
/// `HTTPRequest.bodyLimit` bytes. What is not HTTP fails with a sentence
/// naming the host and what was wrong. Pure: no sockets, no clock; memory
/// stays within the limits whatever arrives.
public struct PlainHTTPReplyReader: Sendable {
    /// The longest header line, status line or chunk-size line.
    public static let lineLimit = 8 * 1024
    /// All header lines of the response together (the `1xx` ones included).
    public static let headerBytesLimit = 64 * 1024
    /// Header lines kept for display; more are read and dropped, but for the
    /// first of each of `decisive`.
    public static let headerLimit = HTTPRequest.headerLimit
    /// The headers that say how the reply is framed and where a redirect goes:
    /// kept wherever they stand. A portal that sends 300 `Set-Cookie` lines
    /// first is still read to its end, and still a redirect to its sign-in page.
    package static let decisive = ["transfer-encoding", "content-length", "location"]
    public static let bodyLimit = HTTPRequest.bodyLimit

    public enum Step: Sendable, Equatable {
        /// Give it more bytes (or `end()` when the connection closed).
        case more
        /// The reply is complete, or its body reached the limit (`truncated`).
        case done
        /// Not a usable reply: why, in a sentence naming the host.
        case failed(String)
    }

    public private(set) var status = 0
    /// Header lines of the final response, trimmed, without the status line.
    public private(set) var headers: [String] = []
    public private(set) var body: [UInt8] = []
    /// The body went on past the limit; reading stopped there.
    public private(set) var truncated = false
    /// Bytes taken so far.
    public private(set) var received = 0

    private let host: String
    /// Body bytes kept; reading stops past them.
    private let limit: Int
    private var phase = Phase.statusLine
    private var line: [UInt8] = []
    private var headerBytes = 0
    /// Which of `decisive` the kept headers hold.
    private var decisiveSeen: Set<String> = []

    private enum Phase: Sendable, Equatable {
        case statusLine, headers
        /// `left`: nil until the connection closes.
        case body(left: Int?)
        case chunkSize, chunkData(left: Int), chunkEnd, trailers
        case done
        case failed(String)
    }

    /// `host`: the name the sentences use ("nmcheck.gnome.org"); `bodyLimit`:
    /// the body bytes to keep, at most `Self.bodyLimit`.
    public init(host: String, bodyLimit: Int = Self.bodyLimit) {
        self.host = host
        limit = max(0, min(bodyLimit, Self.bodyLimit))
        line.reserveCapacity(256)
    }

    /// Takes the next bytes of the connection.
    public mutating func read(_ bytes: some Collection<UInt8>) -> Step {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            switch phase {
            case .done, .failed: return step
            case .body(let left):
                index = takeBody(bytes, from: index, left: left)
            case .chunkData(let left):
                index = takeBody(bytes, from: index, left: left)
            default:
                let byte = bytes[index]
                index = bytes.index(after: index)
                received += 1
                takeLineByte(byte, rest: bytes[index...])
            }
        }
        return step
    }

    /// The connection closed: the reply is complete only if its framing ended here.
    public mutating func end() -> Step {
        switch phase {
        case .done, .failed: break
        case .statusLine where received == 0:
            phase = .failed("\(host) closed the connection without a reply")
        case .statusLine, .headers:
            phase = .failed("\(host) closed the connection in the middle of its headers")
        case .body(nil):
            phase = .done
        case .body(let left?):
            phase = .failed("\(host) closed the connection with \(left) bytes of its body still to come")
        case .chunkSize, .chunkData, .chunkEnd, .trailers:
            phase = .failed("\(host) closed the connection in the middle of its chunked body")
        }
        return step
    }

    /// Whether two reads of the same bytes, cut differently, ended alike: the
    /// same step, but for the bytes a "not HTTP" refusal quotes, which are what
    /// had arrived when it was refused (it is refused at once, not when more come).
    public static func sameOutcome(_ a: Step, _ b: Step) -> Bool {
        if case .failed(let x) = a, case .failed(let y) = b, x.contains(notHTTP), y.contains(notHTTP) { return true }
        return a == b
    }

    private static let notHTTP = " answered something that is not HTTP: "

    public var step: Step {
        switch phase {
        case .done: .done
        case .failed(let why): .failed(why)
        default: .more
        }
    }

    // MARK: Lines: the status line, header lines, chunk sizes, trailers

    private mutating func takeLineByte(_ byte: UInt8, rest: some Collection<UInt8>) {
        if phase == .statusLine, line.count < 5, byte != Self.httpPrefix[line.count] {
            phase = .failed(host + Self.notHTTP + Self.quoted(line + [byte] + Array(rest.prefix(16))))
            return
        }
        if byte == 0x0A {
            if line.last == 0x0D { line.removeLast() }
            let complete = line
            line.removeAll(keepingCapacity: true)
            endOfLine(complete)
            return
        }
        if byte == 0, phase == .statusLine || phase == .headers {
            phase = .failed("\(host) sent a NUL byte in its headers")
            return
        }
        guard line.count < Self.lineLimit else {
            let what = switch phase {
            case .statusLine: "status line"
            case .headers: "header line"
            case .trailers: "trailer line"
            default: "chunk size line"
            }
            phase = .failed("\(host) sent a \(what) longer than \(Self.lineLimit) bytes")
            return
        }
        if phase == .statusLine || phase == .headers || phase == .trailers {
            headerBytes += 1
            guard headerBytes <= Self.headerBytesLimit else {
                phase = .failed("\(host) sent more than \(Self.headerBytesLimit) bytes of headers")
                return
            }
        }
        line.append(byte)
    }

    private static let httpPrefix = Array("HTTP/".utf8)

    private mutating func endOfLine(_ text: [UInt8]) {
        switch phase {
        case .statusLine:
            guard let code = Self.statusCode(text) else {
                phase = .failed("\(host) sent a status line that is not HTTP/1: \(Self.quoted(text))")
                return
            }
            status = code
            headers.removeAll()
            decisiveSeen.removeAll()
            phase = .headers
        case .headers:
            if text.isEmpty { endOfHeaders() } else { keepHeader(text) }
        case .chunkSize:
            guard let size = Self.chunkSize(text) else {
                phase = .failed("\(host) sent a chunk size that is not a hexadecimal number: \(Self.quoted(text))")
                return
            }
            phase = size == 0 ? .trailers : .chunkData(left: size)
        case .chunkEnd:
            guard text.isEmpty else {
                phase = .failed("\(host) sent a chunk longer than its size")
                return
            }
            phase = .chunkSize
        case .trailers:
            if text.isEmpty { phase = .done }
        case .body, .chunkData, .done, .failed:
            break
        }
    }

    /// "HTTP/1.1 200 OK", "HTTP/1.0 204", "HTTP/1.1 302 Found" → the code.
    package static func statusCode(_ line: [UInt8]) -> Int? {
        // "HTTP/1." then a digit, a space, three digits, then a space or the end.
        guard line.count >= 12, line.starts(with: Array("HTTP/1.".utf8)), isDigit(line[7]), line[8] == 0x20 else { return nil }
        let digits = line[9..<12]
        guard digits.allSatisfy(isDigit), line.count == 12 || line[12] == 0x20 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private mutating func keepHeader(_ text: [UInt8]) {
        let trimmed = String(decoding: text, as: UTF8.self).trimmingSpaces()
        guard !trimmed.isEmpty else { return }
        let decisive = Self.name(of: trimmed).flatMap { Self.decisive.contains($0) ? $0 : nil }
        // Past the cap only a decisive header not seen yet is kept: the first
        // one counts, as it would within the cap, and memory stays bounded.
        guard headers.count < Self.headerLimit || decisive.map({ !decisiveSeen.contains($0) }) == true else { return }
        headers.append(String(trimmed))
        if let decisive { decisiveSeen.insert(decisive) }
    }

    /// A header line's name, lowercased; nil without a colon.
    private static func name(of line: Substring) -> String? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return line[..<colon].trimmingSpaces().lowercased()
    }

    private mutating func endOfHeaders() {
        // An interim answer ("100 Continue", "103 Early Hints"): the real one follows.
        if (100...199).contains(status) {
            status = 0
            headers.removeAll()
            decisiveSeen.removeAll()
            phase = .statusLine
            return
        }
        if status == 204 || status == 304 {
            phase = .done
            return
        }
        if let coding = header("Transfer-Encoding"),
           coding.split(separator: ",").last?.trimmingSpaces().lowercased() == "chunked" {
            phase = .chunkSize
            return
        }
        if let length = header("Content-Length") {
            guard length.utf8.count <= 18, !length.isEmpty, length.utf8.allSatisfy(Self.isDigit), let count = Int(length) else {
                phase = .failed("\(host) sent a Content-Length that is not a number: \(Self.quoted(Array(length.utf8)))")
                return
            }
            phase = count == 0 ? .done : .body(left: count)
            return
        }
        phase = .body(left: nil)
    }

    private func header(_ name: String) -> String? {
        HTTPReply(status: status, headers: headers, body: [], truncated: false, redirect: nil, rttMs: 0).header(named: name)
    }

    /// The size of a chunk: hexadecimal digits, then optionally spaces and ";extensions".
    package static func chunkSize(_ line: [UInt8]) -> Int? {
        let digits = line.prefix { hexValue($0) != nil }
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        let after = line.dropFirst(digits.count).drop { $0 == 0x20 || $0 == 0x09 }
        guard after.isEmpty || after.first == UInt8(ascii: ";") else { return nil }
        return digits.reduce(0) { $0 * 16 + Int(hexValue($1)!) }
    }

    // MARK: The body

    /// Takes body bytes from `index` on: up to `left` of them when the framing
    /// says how many, all otherwise; keeps what fits under the limit.
    private mutating func takeBody<C: Collection<UInt8>>(_ bytes: C, from index: C.Index, left: Int?) -> C.Index {
        let available = bytes.distance(from: index, to: bytes.endIndex)
        let count = min(available, left ?? available)
        let end = bytes.index(index, offsetBy: count)
        received += count
        let room = limit - body.count
        if count > room {
            body.append(contentsOf: bytes[index...].prefix(room))
            truncated = true
            phase = .done
            return bytes.endIndex
        }
        body.append(contentsOf: bytes[index..<end])
        switch phase {
        case .body(let left?):
            phase = left - count == 0 ? .done : .body(left: left - count)
        case .chunkData(let left):
            phase = left - count == 0 ? .chunkEnd : .chunkData(left: left - count)
        default:
            break
        }
        return end
    }

    // MARK: Bytes in sentences

    /// Bytes as a quoted text for a sentence: printable ASCII as it is, other
    /// bytes as \xNN (line breaks left out), at most 12 of them and "…" after.
    package static func quoted(_ bytes: [UInt8]) -> String {
        var out = "\""
        for byte in bytes.prefix(12) {
            switch byte {
            case 0x0A, 0x0D: break
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out + (bytes.count > 12 ? "…\"" : "\"")
    }

    package static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
