import Glibc

/// A plain `http://` URL in the one form the probe's own client speaks:
/// `http://host[:port]/path?query`, the host a name, an IPv4 address or an
/// IPv6 address in brackets. Anything else (https, a user name, a zone index,
/// dot segments to normalise, bytes a request line cannot carry) is nil and
/// left to libcurl, which knows every form.
package struct PlainHTTPURL: Sendable, Equatable {
    /// Without brackets.
    package var host: String
    package var port: Int
    /// The request target: the path (at least "/") and the query; never the fragment.
    package var target: String

    package var isIPv6Literal: Bool { host.contains(":") }

    /// The host as it goes into the `Host` header and a resolved redirect:
    /// brackets around an IPv6 address, the port when it is not 80.
    package var authority: String {
        let name = isIPv6Literal ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }

    package init?(_ url: String) {
        guard url.utf8.count <= 8192, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") else { return nil }
        var rest = Substring(url.dropFirst(7))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.hasPrefix("?") || target.isEmpty { target = "/" + target }
        guard !authority.contains("@"), let (host, port) = Self.split(authority: authority) else { return nil }
        // libcurl would rewrite these paths ("/a/../b" asks for "/b"): leave them to it.
        let path = target.prefix { $0 != "?" }
        guard !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        self.host = host
        self.port = port
        self.target = target
    }

    /// Host and port from `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func split(authority: Substring) -> (String, Int)? {
        var host = authority
        var portText: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host), &address) == 1 else { return nil }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            }
            // Names of letters, digits, hyphens, dots and underscores; anything
            // else (international names, percent escapes) is libcurl's to translate.
            guard !host.isEmpty, host.utf8.allSatisfy({ Self.isNameByte($0) }) else { return nil }
        }
        var port = 80
        if !portText.isEmpty {
            guard portText.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        }
        return (String(host), port)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// A `Location` header made absolute against this URL, as libcurl reports
    /// a redirect it does not follow: an absolute URL as it is (a "/" path
    /// added when it has none), `//host/path` with this URL's scheme, a path
    /// on this host, and a relative reference against this path's folder
    /// (dot segments removed). Nil for an empty value.
    package func resolve(location raw: String) -> String? {
        let location = String(raw.trimmingSpaces())
        guard !location.isEmpty else { return nil }
        if let schemeEnd = Self.schemeEnd(location) {
            let scheme = location[..<schemeEnd].lowercased()
            let rest = location[location.index(after: schemeEnd)...]
            return scheme + ":" + (rest.hasPrefix("//") ? Self.withRootPath(String(rest)) : String(rest))
        }
        if location.hasPrefix("//") { return "http:" + Self.withRootPath(location) }
        let base = "http://" + authority
        if location.hasPrefix("/") { return base + Self.removingDotSegments(location) }
        let ownPath = String(target.prefix { $0 != "?" })
        if location.hasPrefix("?") { return base + ownPath + location }
        if location.hasPrefix("#") { return base + target + location }
        let folder = ownPath[...(ownPath.lastIndex(of: "/") ?? ownPath.startIndex)]
        return base + Self.removingDotSegments(folder + location)
    }

    /// The index of the ":" ending a URL scheme (RFC 3986: a letter, then
    /// letters, digits, "+", "-", "."), or nil when `text` starts with none.
    private static func schemeEnd(_ text: String) -> String.Index? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text.utf8[..<colon]
        guard let first = scheme.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) else { return nil }
        let ok = scheme.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x2B || b == 0x2D || b == 0x2E
        }
        return ok ? colon : nil
    }

    /// `//host` becomes `//host/`; `//host/p`, `//host?q` keep their path (a "/" before the query).
    private static func withRootPath(_ slashed: String) -> String {
        let afterSlashes = slashed.index(slashed.startIndex, offsetBy: 2)
        let rest = slashed[afterSlashes...]
        guard let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return slashed + "/" }
        if rest[end] == "/" {
            let pathAndMore = rest[end...]
            let pathEnd = pathAndMore.firstIndex { $0 == "?" || $0 == "#" } ?? pathAndMore.endIndex
            return "//" + rest[..<end] + removingDotSegments(String(pathAndMore[..<pathEnd])) + pathAndMore[pathEnd...]
        }
        return "//" + rest[..<end] + "/" + rest[end...]
    }

    /// RFC 3986 section 5.2.4 on the path part; the query and fragment kept as they are.
    package static func removingDotSegments(_ reference: String) -> String {
        let pathEnd = reference.firstIndex { $0 == "?" || $0 == "#" } ?? reference.endIndex
        let path = reference[..<pathEnd]
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            let last = i == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        var joined = output.joined(separator: "/")
        if !joined.hasPrefix("/") { joined = "/" + joined }
        return joined + reference[pathEnd...]
    }
}
