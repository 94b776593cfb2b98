import LifelineCore
import LifelineFormats
import LifelineNet

/// What a captive-portal API (RFC 8908) answered, read as untrusted input:
/// one flat JSON object of at most `HTTPRequest.bodyLimit` bytes; unknown
/// members are ignored, a mistyped one is left out, `captive` is required.
/// `user-portal-url` and `venue-info-url` are kept only as `https://` URLs;
/// another scheme (`http:`, `file:`, `javascript:`) is refused and named in
/// `refusals`, and nothing from the answer is ever opened without a click.
enum CaptivePortalAnswer {
    struct Read: Equatable {
        var portal: CaptivePortal
        /// Why members were not taken, one sentence each.
        var refusals: [String] = []
    }

    enum Failure: Error, Equatable, CustomStringConvertible {
        case status(Int)
        case tooLarge
        case notJSON
        case noCaptive
        var description: String {
            switch self {
            case .status(let s): "answered HTTP \(s)"
            case .tooLarge: "answered more than \(HTTPRequest.bodyLimit / 1024) KiB; not read"
            case .notJSON: "answered something that is not one JSON object"
            case .noCaptive: "answered without a boolean `captive`"
            }
        }
    }

    /// The largest count taken for seconds or bytes remaining (2^53 − 1, exact in any JSON reader).
    static let maxCount: Int64 = (1 << 53) - 1

    static func read(_ reply: HTTPReply, announced: CaptivePortal) -> Result<Read, Failure> {
        guard (200...299).contains(reply.status) else { return .failure(.status(reply.status)) }
        guard !reply.truncated else { return .failure(.tooLarge) }
        return read(body: reply.body, announced: announced)
    }

    static func read(body: [UInt8], announced: CaptivePortal) -> Result<Read, Failure> {
        var read = Read(portal: announced.announcement)
        func url(_ name: String, _ value: String) -> String? {
            if CaptivePortalOption.isHTTPS(value), value.utf8.count <= CaptivePortalOption.maxLength { return value }
            read.refusals.append("refused \(name) '\(CaptivePortalOption.quoted(value))': only https:// URLs are opened")
            return nil
        }
        func count(_ value: FlatJSON.Value) -> Int64? {
            guard let d = value.double, d.isFinite else { return nil }
            return Int64(max(0, min(Double(maxCount), d.rounded(.down))))
        }
        let wellFormed = FlatJSON.forEachMember(body) { name, value in
            switch (name, value) {
            case ("captive", .bool(let b)): read.portal.captive = b
            case ("user-portal-url", .string(let s)): read.portal.userPortalURL = url("user-portal-url", s)
            case ("venue-info-url", .string(let s)): read.portal.venueInfoURL = url("venue-info-url", s)
            case ("seconds-remaining", _): read.portal.secondsRemaining = count(value)
            case ("bytes-remaining", _): read.portal.bytesRemaining = count(value)
            case ("can-extend-session", .bool(let b)): read.portal.canExtendSession = b
            default: break
            }
        }
        guard wellFormed else { return .failure(.notJSON) }
        guard read.portal.captive != nil else { return .failure(.noCaptive) }
        return .success(read)
    }
}
