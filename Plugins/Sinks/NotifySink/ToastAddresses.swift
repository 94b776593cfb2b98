/// Web addresses in a toast's reason, reduced to their host: "redirected to
/// http://portal.example/login?x=1" reads "redirected to portal.example".
///
/// The reason can carry an address a network chose (a portal's `Location`,
/// or the words of a login page the reason quotes), and some servers turn any address in a body into a link of their own
/// accord (GNOME Shell: `scheme://…`, `www.…` and `name.tld/…`), whatever the
/// sender escaped. A bare host with no scheme, no leading `www.` and no path
/// matches none of those patterns, so nothing the network said is clickable,
/// while the user still learns whose page answered. The event log and
/// `lifeline status` keep the whole address.
enum ToastAddresses {
    static func hostsOnly(_ text: String) -> String {
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
    /// address is `scheme://…`, or without a scheme what a server links all
    /// the same: `www.…`, and `name.tld/…` (a page's own words, quoted in the
    /// reason). It ends where a server's link would: at a space, `(`, `)`,
    /// `<`, `>` or a quote.
    private static func shown(_ word: String) -> String {
        if let scheme = word.firstRange(of: "://") {
            let before = word[..<scheme.lowerBound].reversed().prefix { $0.isLetter || $0.isNumber || "+-.".contains($0) }
            let lead = word[..<word.index(scheme.lowerBound, offsetBy: -before.count)]
            return String(lead) + host(from: word[scheme.upperBound...])
        }
        guard let start = word.firstIndex(where: { $0.isLetter || $0.isNumber }) else { return word }
        let candidate = word[start...].prefix { !Self.ends.contains($0) }
        let name = candidate.prefix { !"/?#".contains($0) }
        let linked = withoutWWW(String(name)) != String(name)
            || (name.endIndex < candidate.endIndex && candidate[name.endIndex] == "/" && endsInALetterTLD(name))
        guard linked else { return word }
        return String(word[..<start]) + host(from: word[start...])
    }

    /// Where a server's link ends.
    private static let ends: Set<Character> = ["(", ")", "<", ">", "\"", "'"]

    /// `rest` is an address from its authority on: its host, the punctuation
    /// after the address, and what follows it, shown in turn.
    private static func host(from rest: Substring) -> String {
        var address = rest.prefix { !Self.ends.contains($0) }
        let after = rest[address.endIndex...]
        let trailing = String(address.reversed().prefix { ".,;:!?]}".contains($0) }.reversed())
        address = address.dropLast(trailing.count)
        var authority = address.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = String(authority)
        // A port is no part of the name, and "[::1]" is an address, not a link.
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        host = withoutWWW(host)
        return (host.isEmpty ? "?" : host) + trailing + shown(String(after))
    }

    /// "evil.example": a dotted name whose last label is letters, as a domain's
    /// is ("10.0.0.0" is an address and no link).
    private static func endsInALetterTLD(_ name: Substring) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let label = name[name.index(after: dot)...]
        return label.count >= 2 && label.allSatisfy { $0.isLetter }
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
