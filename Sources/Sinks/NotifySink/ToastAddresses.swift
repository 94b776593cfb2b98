/// Web addresses in a toast's reason, reduced to their host: "redirected to
/// http://portal.example/login?x=1" reads "redirected to portal.example".
///
/// The reason can carry an address a network chose (a portal's `Location`),
/// and some servers turn any address in a body into a link of their own
/// accord (GNOME Shell: `scheme://…`, `www.…` and `name.tld/…`), whatever the
/// sender escaped. A bare host with no scheme, no leading `www.` and no path
/// matches none of those patterns, so nothing the network said is clickable,
/// while the user still learns whose page answered. The event log and
/// `lifeline status` keep the whole address.
enum ToastAddresses {
    static func hostsOnly(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var out = ""
        var word = ""
        for ch in text {
            if ch.isWhitespace {
                out += shown(word)
                out.append(ch)
                word = ""
            } else {
                word.append(ch)
            }
        }
        return out + shown(word)
    }

    /// One whitespace-separated word: its address as a host, what stands
    /// before the address ("(") and after it (punctuation, "\">") kept. An
    /// address ends where a server's link would: at a space, `(`, `)`, `<`,
    /// `>` or a quote.
    private static func shown(_ word: String) -> String {
        guard let scheme = word.firstRange(of: "://") else { return word }
        let before = word[..<scheme.lowerBound].reversed().prefix { $0.isLetter || $0.isNumber || "+-.".contains($0) }
        let lead = word[..<word.index(scheme.lowerBound, offsetBy: -before.count)]
        var rest = word[scheme.upperBound...].prefix { !"()<>\"'".contains($0) }
        let after = word[rest.endIndex...]
        let trailing = String(rest.reversed().prefix { ".,;:!?]}".contains($0) }.reversed())
        rest = rest.dropLast(trailing.count)
        var authority = rest.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = String(authority)
        // A port is no part of the name, and "[::1]" is an address, not a link.
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        host = withoutWWW(host)
        return String(lead) + (host.isEmpty ? "?" : host) + trailing + shown(String(after))
    }

    /// "www.", "www2." … at the start makes a link on GNOME Shell by itself.
    private static func withoutWWW(_ host: String) -> String {
        let lower = host.lowercased()
        guard lower.hasPrefix("www") else { return host }
        let digits = lower.dropFirst(3).prefix { $0.isNumber }
        guard digits.count <= 3, lower.dropFirst(3 + digits.count).first == "." else { return host }
        return String(host.dropFirst(3 + digits.count + 1))
    }
}
