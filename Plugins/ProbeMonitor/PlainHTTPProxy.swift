import Glibc

/// Whether libcurl would send a plain `http://` request through a proxy from
/// the environment; such a request stays with libcurl. Its rules (libcurl
/// 7.88, Debian 12's): `http_proxy`, then `all_proxy`, then `ALL_PROXY`
/// (never `HTTP_PROXY`: a CGI program gets the request's `Proxy:` header in
/// it), an empty variable counting as unset; and no proxy for a host that
/// `no_proxy` (or, when that is unset or empty, `NO_PROXY`) names.
struct PlainHTTPProxy: Equatable {
    var httpProxy: String?
    var allProxy: String?
    var noProxy: String?

    /// The daemon's own environment (`read`: a variable's value, for tests).
    static func fromEnvironment(_ read: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> PlainHTTPProxy {
        func variable(_ name: String) -> String? {
            guard let text = read(name), !text.isEmpty else { return nil }
            return text
        }
        return PlainHTTPProxy(httpProxy: variable("http_proxy"),
                              allProxy: variable("all_proxy") ?? variable("ALL_PROXY"),
                              noProxy: variable("no_proxy") ?? variable("NO_PROXY"))
    }

    /// Whether a request to `host` (brackets around an IPv6 address) goes through a proxy.
    func applies(to host: String) -> Bool {
        guard httpProxy != nil || allProxy != nil else { return false }
        return !Self.noProxyMatches(host, noProxy)
    }

    /// libcurl's `no_proxy` test: "*" alone matches every host; otherwise a
    /// list of names (a name matches itself and its subdomains, a leading and a
    /// trailing dot ignored, letters in any case) or, for a host that is an
    /// address, addresses with an optional "/bits" prefix length. Entries are
    /// separated by commas; libcurl 7.88 also takes spaces between them.
    static func noProxyMatches(_ rawHost: String, _ list: String?) -> Bool {
        guard let list, !list.isEmpty, !rawHost.isEmpty else { return false }
        if list == "*" { return true }
        enum Kind { case name, ipv4, ipv6 }
        var kind = Kind.name
        var host = Substring(rawHost)
        var v4 = in_addr()
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = host[host.index(after: host.startIndex)..<close]
            kind = .ipv6
        } else if inet_pton(AF_INET, String(host), &v4) == 1 {
            kind = .ipv4
        } else if host.hasSuffix(".") {
            host = host.dropLast()
        }
        let hostBytes = Array(host.utf8)
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            switch kind {
            case .name:
                var token = Substring(entry)
                if token.hasSuffix(".") { token = token.dropLast() }
                if token.hasPrefix(".") { token = token.dropFirst() }
                let tokenBytes = Array(token.utf8)
                if tokenBytes.count == hostBytes.count {
                    if Self.equalIgnoringCase(tokenBytes, hostBytes[...]) { return true }
                } else if tokenBytes.count < hostBytes.count {
                    let tailStart = hostBytes.count - tokenBytes.count
                    if hostBytes[tailStart - 1] == UInt8(ascii: "."), Self.equalIgnoringCase(tokenBytes, hostBytes[tailStart...]) {
                        return true
                    }
                }
            case .ipv4, .ipv6:
                guard entry.utf8.count < 128 else { continue }
                var network = Substring(entry)
                var bits = 0
                if let slash = entry.firstIndex(of: "/") {
                    network = entry[..<slash]
                    bits = Self.atoi(entry[entry.index(after: slash)...])
                }
                let match = kind == .ipv6 ? cidr6(String(host), String(network), bits) : cidr4(String(host), String(network), bits)
                if match { return true }
            }
        }
        return false
    }

    /// libcurl's: no prefix length (or 0, or 32) compares the whole address.
    static func cidr4(_ address: String, _ network: String, _ bits: Int) -> Bool {
        guard bits >= 0, bits <= 32 else { return false }
        var a = in_addr(), n = in_addr()
        guard inet_pton(AF_INET, address, &a) == 1, inet_pton(AF_INET, network, &n) == 1 else { return false }
        if bits != 0 && bits != 32 {
            let mask = UInt32.max << (32 - UInt32(bits))
            return (UInt32(bigEndian: a.s_addr) ^ UInt32(bigEndian: n.s_addr)) & mask == 0
        }
        return a.s_addr == n.s_addr
    }

    /// libcurl's: no prefix length (or 0) compares all 128 bits. Its test of a
    /// prefix that ends inside a byte is inverted (the entry matches when those
    /// bits differ); kept, so the probe goes where libcurl would send it.
    static func cidr6(_ address: String, _ network: String, _ rawBits: Int) -> Bool {
        let bits = rawBits == 0 ? 128 : rawBits
        guard bits > 0, bits <= 128 else { return false }
        var a = in6_addr(), n = in6_addr()
        guard inet_pton(AF_INET6, address, &a) == 1, inet_pton(AF_INET6, network, &n) == 1 else { return false }
        let x = withUnsafeBytes(of: a) { Array($0) }, y = withUnsafeBytes(of: n) { Array($0) }
        let bytes = bits / 8, rest = bits % 8
        if x.prefix(bytes) != y.prefix(bytes) { return false }
        if rest != 0 { return (x[bytes] ^ y[bytes]) & (0xFF << (8 - rest)) != 0 }
        return true
    }

    private static func equalIgnoringCase(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
        return a.count == b.count && zip(a, b).allSatisfy { lower($0) == lower($1) }
    }

    /// C's `atoi`: leading digits, 0 when there are none (a prefix length that
    /// is no number compares the whole address, as in libcurl).
    private static func atoi(_ text: Substring) -> Int {
        if text.hasPrefix("-"), text.dropFirst().first?.isNumber == true { return -1 }  // out of range: no match
        let digits = text.drop { $0 == "+" }.prefix { $0.isASCII && $0.isNumber }
        return digits.count > 6 ? -1 : Int(digits) ?? 0
    }
}
