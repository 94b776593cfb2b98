import Glibc

/// Whether libcurl would send a plain `http://` request through a proxy from
/// the environment; such a request stays with libcurl. Its rules (libcurl
/// 7.88, Debian 12's): `http_proxy`, then `all_proxy`, then `ALL_PROXY`
/// (never `HTTP_PROXY`: a CGI program gets the request's `Proxy:` header in
/// it), an empty variable counting as unset; and no proxy for a host that
/// `no_proxy` (or, when that is unset or empty, `NO_PROXY`) names.
package struct PlainHTTPProxy: Equatable {
    package var httpProxy: String?
    package var allProxy: String?
    package var noProxy: String?

    /// The daemon's own environment (`read`: a variable's value, for tests).
    package static func fromEnvironment(_ read: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> PlainHTTPProxy {
        func variable(_ name: String) -> String? {
            guard let text = read(name), !text.isEmpty else { return nil }
            return text
        }
        return PlainHTTPProxy(httpProxy: variable("http_proxy"),
                              allProxy: variable("all_proxy") ?? variable("ALL_PROXY"),
                              noProxy: variable("no_proxy") ?? variable("NO_PROXY"))
    }

    /// The proxy a request for `url` goes through, as "host:port" (libcurl's
    /// default port 1080 when it names none), nil when it goes direct. For
    /// https:// URLs libcurl reads `https_proxy` (or `HTTPS_PROXY`) first.
    package func proxy(for url: String, read: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> String? {
        guard !Self.noProxyMatches(FailedLayer.Target(url: url).host, noProxy) else { return nil }
        let https = url.lowercased().hasPrefix("https:")
        let secure = https ? [read("https_proxy"), read("HTTPS_PROXY")].compactMap { $0 }.first { !$0.isEmpty } : nil
        guard let text = secure ?? (https ? allProxy : httpProxy ?? allProxy) else { return nil }
        var rest = Substring(text)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.prefix { $0 != "/" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        // Without a port libcurl dials 1080, not the scheme's.
        let hasPort = rest.hasPrefix("[") ? rest.contains("]:") : rest.contains(":")
        return hasPort ? String(rest) : "\(rest):1080"
    }

    /// Whether a request to `host` (an IPv6 address without brackets) goes through a proxy.
    package func applies(to host: String) -> Bool {
        guard httpProxy != nil || allProxy != nil else { return false }
        return !Self.noProxyMatches(host, noProxy)
    }

    /// libcurl's `no_proxy` test: "*" alone matches every host; otherwise a
    /// list of names (a name matches itself and its subdomains, a leading and a
    /// trailing dot ignored, letters in any case) or, for an IPv4 host,
    /// addresses with an optional "/bits" prefix length. An IPv6 host is
    /// compared as a name: libcurl hands it over without its brackets. Entries
    /// are separated by commas; libcurl 7.88 also takes spaces between them.
    package static func noProxyMatches(_ rawHost: String, _ list: String?) -> Bool {
        guard let list, !list.isEmpty, !rawHost.isEmpty else { return false }
        if list == "*" { return true }
        var host = Substring(rawHost)
        var v4 = in_addr()
        let isIPv4 = inet_pton(AF_INET, rawHost, &v4) == 1
        if !isIPv4, host.hasSuffix(".") { host = host.dropLast() }
        let hostBytes = Array(host.utf8)
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            if isIPv4 {
                guard entry.utf8.count < 128 else { continue }
                var network = Substring(entry)
                var bits = 0
                if let slash = entry.firstIndex(of: "/") {
                    network = entry[..<slash]
                    bits = Self.atoi(entry[entry.index(after: slash)...])
                }
                if cidr4(rawHost, String(network), bits) { return true }
                continue
            }
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
        }
        return false
    }

    /// libcurl's: no prefix length (or 0, or 32) compares the whole address.
    package static func cidr4(_ address: String, _ network: String, _ bits: Int) -> Bool {
        guard bits >= 0, bits <= 32 else { return false }
        var a = in_addr(), n = in_addr()
        guard inet_pton(AF_INET, address, &a) == 1, inet_pton(AF_INET, network, &n) == 1 else { return false }
        if bits != 0 && bits != 32 {
            let mask = UInt32.max << (32 - UInt32(bits))
            return (UInt32(bigEndian: a.s_addr) ^ UInt32(bigEndian: n.s_addr)) & mask == 0
        }
        return a.s_addr == n.s_addr
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
