import Testing

@testable import LifelineNet

/// The probe's own reply reader with what servers really send and with what
/// hostile or broken ones do: every refusal names the host and the problem.
@Suite struct PlainHTTPReplyTests {
    /// Reads `text` in one piece, then once more a byte at a time: both must agree.
    func read(_ text: String, close: Bool = false) -> PlainHTTPReplyReader {
        read(Array(text.utf8), close: close)
    }

    func read(_ bytes: [UInt8], close: Bool = false) -> PlainHTTPReplyReader {
        var whole = PlainHTTPReplyReader(host: "check.example")
        var step = whole.read(bytes)
        if close, step == .more { step = whole.end() }
        var single = PlainHTTPReplyReader(host: "check.example")
        var singleStep = PlainHTTPReplyReader.Step.more
        for byte in bytes where singleStep == .more { singleStep = single.read([byte]) }
        if close, singleStep == .more { singleStep = single.end() }
        #expect(PlainHTTPReplyReader.sameOutcome(step, singleStep), "one piece and byte by byte differ: \(step) / \(singleStep)")
        #expect(whole.body == single.body && whole.headers == single.headers && whole.status == single.status)
        return whole
    }

    func failure(_ reader: PlainHTTPReplyReader) -> String {
        if case .failed(let why) = reader.step { return why }
        return "no failure: \(reader.step)"
    }

    @Test func a204IsDoneAtTheEmptyLine() {
        let r = read("HTTP/1.1 204 No Content\r\nServer: nginx\r\nContent-Length: 0\r\n\r\n")
        #expect(r.step == .done)
        #expect(r.status == 204)
        #expect(r.headers == ["Server: nginx", "Content-Length: 0"])
        #expect(r.body.isEmpty)
    }

    @Test func contentLengthFramesTheBodyAndIgnoresWhatFollows() {
        let r = read("HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\nNetworkManager is online\nEXTRA")
        #expect(r.step == .done)
        #expect(String(decoding: r.body, as: UTF8.self) == "NetworkManager is online\n")
        #expect(!r.truncated)
    }

    @Test func bareLineFeedsAndAStatusWithoutReasonAreHTTP() {
        let r = read("HTTP/1.0 200\nContent-Length: 2\n\nok")
        #expect(r.step == .done)
        #expect(r.status == 200)
        #expect(r.body == Array("ok".utf8))
    }

    @Test func aBodyUntilCloseEndsWithTheConnection() {
        var r = PlainHTTPReplyReader(host: "check.example")
        #expect(r.read(Array("HTTP/1.0 200 OK\r\n\r\nhello ".utf8)) == .more)
        #expect(r.read(Array("world".utf8)) == .more)
        #expect(r.end() == .done)
        #expect(r.body == Array("hello world".utf8))
    }

    @Test func chunkedBodiesAreJoinedWithExtensionsAndTrailers() {
        let r = read("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;name=x\r\nNetwo\r\n13 \r\nrkManager is online\r\n0\r\nX-Trailer: 1\r\n\r\n")
        #expect(r.step == .done)
        #expect(String(decoding: r.body, as: UTF8.self) == "NetworkManager is online")
    }

    @Test func interimResponsesAreSkipped() {
        let r = read("HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n")
        #expect(r.step == .done)
        #expect(r.status == 302)
        #expect(r.headers == ["Location: /login", "Content-Length: 0"])
    }

    @Test func aBodyOverTheLimitIsCutThereAndReadingStops() {
        let size = HTTPRequest.bodyLimit + 10
        var r = PlainHTTPReplyReader(host: "check.example")
        #expect(r.read(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8)) == .more)
        #expect(r.read([UInt8](repeating: 0x78, count: HTTPRequest.bodyLimit)) == .more)
        #expect(r.read([UInt8](repeating: 0x78, count: 10)) == .done)
        #expect(r.truncated)
        #expect(r.body.count == HTTPRequest.bodyLimit)
        // A body of exactly the limit is whole.
        let exact = read("HTTP/1.1 200 OK\r\nContent-Length: \(HTTPRequest.bodyLimit)\r\n\r\n" + String(repeating: "y", count: HTTPRequest.bodyLimit))
        #expect(exact.step == .done && !exact.truncated && exact.body.count == HTTPRequest.bodyLimit)
    }

    @Test func aChunkedBodyOverTheLimitIsCutToo() {
        let chunk = String(repeating: "z", count: 4096)
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "1000\r\n\(chunk)\r\n", count: 20)
        var r = PlainHTTPReplyReader(host: "check.example")
        #expect(r.read(Array(text.utf8)) == .done)
        #expect(r.truncated && r.body.count == HTTPRequest.bodyLimit)
    }

    @Test func onlyTheHeaderLimitIsKept() {
        let many = (0..<300).map { "X-H\($0): v\r\n" }.joined()
        let r = read("HTTP/1.1 204 No Content\r\n\(many)\r\n")
        #expect(r.step == .done)
        #expect(r.headers.count == HTTPRequest.headerLimit)
    }

    /// Framing and `Location` count wherever they stand; only the rest is capped.
    @Test func framingAndLocationPastTheHeaderLimitStillCount() {
        let cookies = (0..<300).map { "Set-Cookie: c\($0)=x; Path=/\r\n" }.joined()
        // No close: only Content-Length says the reply is over.
        let redirect = read("HTTP/1.1 302 Found\r\n\(cookies)Location: http://portal.example/login\r\nContent-Length: 5\r\n\r\nhello")
        #expect(redirect.step == .done)
        #expect(redirect.body == Array("hello".utf8))
        #expect(redirect.headers.count == HTTPRequest.headerLimit + 2)
        #expect(redirect.headers.suffix(2) == ["Location: http://portal.example/login", "Content-Length: 5"])

        let chunked = read("HTTP/1.1 200 OK\r\n\(cookies)Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        #expect(chunked.step == .done)
        #expect(chunked.body == Array("ok".utf8))

        // The first of each counts, as within the cap; later ones are dropped like any other line.
        let twice = read("HTTP/1.1 302 Found\r\n\(cookies)Location: /a\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
        #expect(twice.headers.filter { $0.hasPrefix("Location") } == ["Location: /a"])
        #expect(twice.headers.count == HTTPRequest.headerLimit + 2)
    }

    // MARK: What is not a usable reply

    @Test func anSSHServerIsNotHTTP() {
        let r = read("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
        #expect(failure(r) == "check.example answered something that is not HTTP: \"SSH-2.0-Open…\"")
    }

    @Test func binaryJunkIsNotHTTPAndShownEscaped() {
        let r = read([0x16, 0x03, 0x01, 0x00, 0xA5, 0x01])
        #expect(failure(r) == "check.example answered something that is not HTTP: \"\\x16\\x03\\x01\\x00\\xA5\\x01\"")
    }

    @Test func aStatusLineOfAnotherVersionIsRefused() {
        #expect(failure(read("HTTP/2 200\r\n\r\n")) == "check.example sent a status line that is not HTTP/1: \"HTTP/2 200\"")
        #expect(failure(read("HTTP/1.1 2000 OK\r\n\r\n")).hasPrefix("check.example sent a status line that is not HTTP/1"))
        #expect(failure(read("HTTP/1.1 abc\r\n\r\n")).hasPrefix("check.example sent a status line that is not HTTP/1"))
    }

    @Test func aBadChunkSizeIsNamed() {
        let r = read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        #expect(failure(r) == "check.example sent a chunk size that is not a hexadecimal number: \"zz\"")
        let huge = read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n")
        #expect(failure(huge).hasPrefix("check.example sent a chunk size that is not a hexadecimal number"))
    }

    @Test func aChunkLongerThanItsSizeIsNamed() {
        let r = read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n")
        #expect(failure(r) == "check.example sent a chunk longer than its size")
    }

    @Test func aHeaderLineTooLongIsRefusedBeforeItGrowsFurther() {
        var r = PlainHTTPReplyReader(host: "check.example")
        _ = r.read(Array("HTTP/1.1 200 OK\r\nX-Long: ".utf8))
        let step = r.read([UInt8](repeating: 0x61, count: 100_000))
        #expect(step == .failed("check.example sent a header line longer than 8192 bytes"))
        #expect(r.received < 9000, "read on after the limit: \(r.received) bytes")
    }

    @Test func endlessShortHeadersAreRefusedAtTheTotal() {
        let lines = String(repeating: "X-A: b\r\n", count: 10_000)
        let r = read("HTTP/1.1 200 OK\r\n" + lines)
        #expect(failure(r) == "check.example sent more than 65536 bytes of headers")
    }

    @Test func aNulByteInTheHeadersIsRefused() {
        let r = read(Array("HTTP/1.1 200 OK\r\nX-A: b".utf8) + [0] + Array("c\r\n\r\n".utf8))
        #expect(failure(r) == "check.example sent a NUL byte in its headers")
    }

    @Test func aBadContentLengthIsNamed() {
        #expect(failure(read("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n")) == "check.example sent a Content-Length that is not a number: \"-5\"")
        #expect(failure(read("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"))
            .hasPrefix("check.example sent a Content-Length that is not a number"))
    }

    @Test func closesAreNamedByWhereTheyCame() {
        #expect(failure(read("", close: true)) == "check.example closed the connection without a reply")
        #expect(failure(read("HTTP/1.1 200 OK\r\nContent-Le", close: true)) == "check.example closed the connection in the middle of its headers")
        #expect(failure(read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", close: true))
            == "check.example closed the connection with 7 bytes of its body still to come")
        #expect(failure(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", close: true))
            == "check.example closed the connection in the middle of its chunked body")
    }
}

/// The URLs the own client takes, and a redirect's target as libcurl reports it.
@Suite struct PlainHTTPURLTests {
    @Test func theFormsItTakes() {
        let plain = PlainHTTPURL("http://nmcheck.gnome.org/check_network_status.txt")
        #expect(plain.map { [$0.host, "\($0.port)", $0.target] } == ["nmcheck.gnome.org", "80", "/check_network_status.txt"])
        #expect(plain?.authority == "nmcheck.gnome.org")
        let v6 = PlainHTTPURL("HTTP://[fd00::1]:8080?x=1#frag")
        #expect(v6.map { [$0.host, "\($0.port)", $0.target] } == ["fd00::1", "8080", "/?x=1"])
        #expect(v6?.authority == "[fd00::1]:8080")
        #expect(PlainHTTPURL("http://10.0.0.1")?.target == "/")
    }

    @Test func theFormsLeftToLibcurl() {
        for url in ["https://check.example/", "http://user:pw@check.example/", "http://check.example:0/", "http://check.example:99999/",
                    "http://[fe80::1%25eth0]/", "http://[zz]/", "http://bücher.example/", "http://check.example/a b",
                    "http://check.example/a/../b", "ftp://check.example/", "http:/check.example", "http://:80/"] {
            #expect(PlainHTTPURL(url) == nil, "\(url)")
        }
    }

    @Test func redirectTargetsResolveAsLibcurlReportsThem() {
        let base = PlainHTTPURL("http://10.0.0.1:8080/dir/check.txt?q=1")!
        #expect(base.resolve(location: "http://10.0.0.1:8080/login") == "http://10.0.0.1:8080/login")
        #expect(base.resolve(location: "HTTPS://portal.example") == "https://portal.example/")
        #expect(base.resolve(location: "//portal.example/a/./b") == "http://portal.example/a/b")
        #expect(base.resolve(location: "/login?from=x") == "http://10.0.0.1:8080/login?from=x")
        #expect(base.resolve(location: "login") == "http://10.0.0.1:8080/dir/login")
        #expect(base.resolve(location: "../up/../login") == "http://10.0.0.1:8080/login")
        #expect(base.resolve(location: "?page=2") == "http://10.0.0.1:8080/dir/check.txt?page=2")
        #expect(base.resolve(location: "  ") == nil)
    }
}

/// When libcurl would use a proxy from the environment (and so carries the request).
@Suite struct PlainHTTPProxyTests {
    @Test func whichVariablesCount() {
        #expect(!PlainHTTPProxy(httpProxy: nil, allProxy: nil, noProxy: nil).applies(to: "check.example"))
        #expect(PlainHTTPProxy(httpProxy: "http://p:3128", allProxy: nil, noProxy: nil).applies(to: "check.example"))
        #expect(PlainHTTPProxy(httpProxy: nil, allProxy: "socks5://p", noProxy: nil).applies(to: "check.example"))
    }

    @Test func noProxyMatchesAsLibcurlDoes() {
        func matches(_ host: String, _ list: String) -> Bool { PlainHTTPProxy.noProxyMatches(host, list) }
        #expect(matches("anything", "*"))
        #expect(!matches("anything", "*,x"))
        #expect(matches("check.example", "check.example"))
        #expect(matches("www.check.example", ".check.example."))
        #expect(matches("WWW.Check.Example.", "check.example"))
        #expect(!matches("notcheck.example", "check.example"))
        #expect(matches("check.example", "other.example , check.example"))
        #expect(matches("check.example", "other.example check.example"))
        #expect(matches("10.1.2.3", "10.0.0.0/8"))
        #expect(!matches("11.1.2.3", "10.0.0.0/8"))
        #expect(matches("10.1.2.3", "10.1.2.3"))
        #expect(!matches("10.1.2.3", "10.1.2.0/0"))
        #expect(!matches("10.1.2.3", "10.1.2.0/33"))
        #expect(matches("fd00::1", "fd00::1") && !matches("fd00::1", "fd00::/8"))
    }

    @Test func theEnvironmentIsReadAsLibcurlReadsIt() {
        func proxy(_ environment: [String: String]) -> PlainHTTPProxy { PlainHTTPProxy.fromEnvironment { environment[$0] } }
        // HTTP_PROXY is never read for http:// (a CGI program gets a request's Proxy: header in it).
        let upper = proxy(["HTTP_PROXY": "http://ignored:3128"])
        #expect(upper == PlainHTTPProxy(httpProxy: nil, allProxy: nil, noProxy: nil))
        #expect(HTTPProber.ownClientURL("http://check.example/", proxy: upper) != nil)
        // Empty is unset: ALL_PROXY then counts.
        let all = proxy(["http_proxy": "", "all_proxy": "", "ALL_PROXY": "http://all:3128"])
        #expect(all == PlainHTTPProxy(httpProxy: nil, allProxy: "http://all:3128", noProxy: nil))
        #expect(HTTPProber.ownClientURL("http://check.example/", proxy: all) == nil)
        let excepted = proxy(["http_proxy": "http://p:3128", "no_proxy": "", "NO_PROXY": "example"])
        #expect(HTTPProber.ownClientURL("http://check.example/", proxy: excepted) != nil)
        #expect(HTTPProber.ownClientURL("http://check.other/", proxy: excepted) == nil)
        // https is libcurl's whatever the environment says.
        #expect(HTTPProber.ownClientURL("https://check.example/", proxy: upper) == nil)
    }
}
