import LifelineTestKit
import LifelineCore
import LifelineFormats
import Testing

@testable import LifelineNet
@testable import NetlinkMonitor
@testable import ProbeMonitor

/// What a network announces (RFC 8910) and what its API answers (RFC 8908),
/// read as untrusted input.
@Suite struct CaptivePortalParsingTests {
    /// An RTM_NEWNDUSEROPT as the kernel sends it: nduseroptmsg (16 bytes),
    /// then the RA's option. `declared` overrides `nduseropt_opts_len`.
    static func userOption(index: Int32, icmpType: UInt8 = 134, _ option: [UInt8], declared: UInt16? = nil) -> [UInt8] {
        let body: [UInt8] = [10, 0] + NetlinkWire.u16(declared ?? UInt16(option.count)) + NetlinkWire.i32(index) + [icmpType, 0, 0, 0]
            + NetlinkWire.u32(0) + option
        return NetlinkWire.message(68, body)
    }

    /// Option 37: type, length in 8-byte units, the URI, NUL padding.
    static func option37(_ uri: String) -> [UInt8] {
        let value = Array(uri.utf8)
        let units = (2 + value.count + 7) / 8
        return [37, UInt8(units)] + value + [UInt8](repeating: 0, count: units * 8 - 2 - value.count)
    }

    func announced(_ bytes: [UInt8]) -> CaptivePortalOption? {
        let r = NetlinkParser.parse(bytes)
        guard case .ndUserOption(let o)? = r.messages.first?.body else { return nil }
        return o.captivePortal
    }

    @Test func theRAsOptionNamesTheAPI() {
        let bytes = Self.userOption(index: 7, Self.option37("https://portal.example/capport"))
        let r = NetlinkParser.parse(bytes)
        #expect(r.problems.isEmpty)
        guard case .ndUserOption(let o)? = r.messages.first?.body else { Issue.record("\(r.messages)"); return }
        #expect(o.index == 7)
        #expect(o.captivePortal == .api("https://portal.example/capport"))
    }

    @Test func otherSchemesAndTextAreRefusedWithAReason() {
        #expect(announced(Self.userOption(index: 1, Self.option37(CaptivePortal.unrestricted))) == .unrestricted)
        guard case .refused(let why)? = announced(Self.userOption(index: 1, Self.option37("http://portal.example/"))) else {
            Issue.record("http:// was not refused"); return
        }
        #expect(why.contains("is not an https:// URL"))
        for uri in ["file:///etc/passwd", "javascript:alert(1)", "https://", "https://a b/"] {
            guard case .refused = CaptivePortalOption(uri: uri) else { Issue.record("\(uri) was taken"); continue }
        }
        guard case .refused? = announced(Self.userOption(index: 1, [37, 1, 0xFF, 0xFE, 0, 0, 0, 0])) else {
            Issue.record("bytes that are no text were taken"); return
        }
    }

    @Test func anOptionOfAnotherTypeOrMessageSaysNothing() {
        #expect(announced(Self.userOption(index: 1, [25, 1, 0, 0, 0, 0, 0, 0])) == nil)  // RDNSS
        #expect(announced(Self.userOption(index: 1, icmpType: 135, Self.option37("https://p.example/"))) == nil)
        // An option whose length runs past the message.
        #expect(announced(Self.userOption(index: 1, [37, 9, 0, 0, 0, 0, 0, 0])) == nil)
    }

    @Test func aLengthPastTheMessageIsMalformed() {
        let r = NetlinkParser.parse(Self.userOption(index: 1, Self.option37("https://p.example/"), declared: 400))
        #expect(r.messages.isEmpty)
        #expect(r.problems.count == 1)
    }

    @Test func networkdsLinkStateFileNamesTheAPI() {
        let text = "# This is private data. Do not parse.\nADMIN_STATE=configured\nCAPTIVE_PORTAL=https://p.example/api\nDNS=10.0.0.1\n"
        #expect(NetworkdLinks.captivePortal(in: text) == "https://p.example/api")
        #expect(NetworkdLinks.captivePortal(in: "ADMIN_STATE=configured\nCAPTIVE_PORTAL=\n") == nil)
        #expect(NetworkdLinks.captivePortal(in: "ADMIN_STATE=configured\n") == nil)
    }

    @Test func anAnnouncementGoesWithItsInterfaceAndItsLifetime() {
        var a = Announcements(lifetime: .seconds(10))
        let t0 = ContinuousClock.now
        let first = a.heard(.api("https://p.example/"), on: 3, at: t0)
        let again = a.heard(.api("https://p.example/"), on: 3, at: t0 + .seconds(5))
        #expect(first && !again, "the same again only extends its life")
        var portal = a.portal(on: 3) { _ in }
        #expect(portal == CaptivePortal(api: "https://p.example/", source: .ra))
        let early = a.prune(links: [3], at: t0 + .seconds(14))
        let late = a.prune(links: [3], at: t0 + .seconds(16))
        #expect(!early && late, "10 s after the last RA it is gone")
        portal = a.portal(on: 3) { _ in }
        #expect(portal == nil)
        let changed = a.networkd([4: .api("https://n.example/")])
        #expect(changed)
        portal = a.portal(on: 4) { _ in }
        #expect(portal?.source == .networkd)
        let gone = a.prune(links: [3], at: t0)
        #expect(gone, "interface 4 is gone")
        var refusals: [String] = []
        _ = a.heard(.refused("no"), on: 3, at: t0)
        for _ in 0..<1000 { _ = a.portal(on: 3) { refusals.append($0) } }
        #expect(refusals == ["no"], "a refusal repeated by the network is reported once")
    }

    let announcement = CaptivePortal(api: "https://p.example/api", source: .ra)

    @Test func theAPIsAnswerIsReadWithTheKeysItGave() throws {
        let body = #"{"captive": false, "user-portal-url": "https://p.example/login", "venue-info-url": "https://p.example/venue", "seconds-remaining": 326, "bytes-remaining": 65536, "can-extend-session": true, "other": {"x": 1}}"#
        let read = try CaptivePortalAnswer.read(body: Array(body.utf8), announced: announcement).get()
        var expected = announcement
        expected.captive = false
        expected.userPortalURL = "https://p.example/login"
        expected.venueInfoURL = "https://p.example/venue"
        expected.secondsRemaining = 326
        expected.bytesRemaining = 65536
        expected.canExtendSession = true
        #expect(read.portal == expected)
        #expect(read.refusals.isEmpty)
        #expect(JSONText.captivePortal(read.portal) == #"{"api":"https://p.example/api","source":"ra","captive":false,"user_portal_url":"https://p.example/login","venue_info_url":"https://p.example/venue","seconds_remaining":326,"bytes_remaining":65536,"can_extend_session":true}"#)
        #expect(StateRecord.parseCaptivePortal(Array(JSONText.captivePortal(read.portal).utf8)) == read.portal)
    }

    @Test func hostileAnswersAreRefusedWithAReason() throws {
        let read = try CaptivePortalAnswer.read(
            body: Array(#"{"captive": true, "user-portal-url": "javascript:alert(1)", "venue-info-url": "http://p.example/"}"#.utf8),
            announced: announcement).get()
        #expect(read.portal.captive == true)
        #expect(read.portal.userPortalURL == nil && read.portal.venueInfoURL == nil)
        #expect(read.refusals == ["refused user-portal-url 'javascript:alert(1)': only https:// URLs are opened",
                                  "refused venue-info-url 'http://p.example/': only https:// URLs are opened"])
        #expect(CaptivePortalAnswer.read(body: Array(#"{"captive": tru"#.utf8), announced: announcement) == .failure(.notJSON))
        #expect(CaptivePortalAnswer.read(body: Array(#"{"user-portal-url": "https://p/"}"#.utf8), announced: announcement) == .failure(.noCaptive))
        let huge = HTTPReply(status: 200, headers: [], body: [], truncated: true, redirect: nil, rttMs: 1)
        #expect(CaptivePortalAnswer.read(huge, announced: announcement) == .failure(.tooLarge))
        let moved = HTTPReply(status: 302, headers: [], body: [], truncated: false, redirect: "https://x/", rttMs: 1)
        #expect(CaptivePortalAnswer.read(moved, announced: announcement) == .failure(.status(302)))
        let silly = try CaptivePortalAnswer.read(body: Array(#"{"captive": false, "seconds-remaining": -5, "bytes-remaining": 1e300}"#.utf8), announced: announcement).get()
        #expect(silly.portal.secondsRemaining == 0 && silly.portal.bytesRemaining == CaptivePortalAnswer.maxCount)
    }
}
