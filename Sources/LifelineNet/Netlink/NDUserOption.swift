import LifelineCore

/// A Router Advertisement's options that the kernel passes on
/// (`RTM_NEWNDUSEROPT`), as received on `index`.
package struct NDUserOption: Equatable, Sendable {
    package var index: Int32
    /// 134 for a Router Advertisement.
    package var icmpType: UInt8
    /// The raw options: type, length in 8-byte units, value.
    package var options: [UInt8]

    package init(index: Int32, icmpType: UInt8, options: [UInt8]) {
        self.index = index
        self.icmpType = icmpType
        self.options = options
    }

    static let routerAdvertisement: UInt8 = 134
    static let captivePortalType: UInt8 = 37

    /// What an RA's captive-portal option (RFC 8910: type 37, the URI, NUL
    /// padding) says: nil when it carries none; `.refused` with the reason
    /// when it carries one no one should ask (not text, not `https://`).
    package var captivePortal: CaptivePortalOption? {
        guard icmpType == Self.routerAdvertisement else { return nil }
        var offset = 0
        while offset + 2 <= options.count {
            let units = Int(options[offset + 1])
            guard units > 0, offset + units * 8 <= options.count else { return nil }
            if options[offset] == Self.captivePortalType {
                return CaptivePortalOption(uri: Array(options[(offset + 2)..<(offset + units * 8)]))
            }
            offset += units * 8
        }
        return nil
    }
}

/// A captive-portal API's address as a network announced it, checked before
/// anyone asks it: the same rules for the RA's option, networkd's state
/// file and NetworkManager's DHCP options.
package enum CaptivePortalOption: Equatable, Sendable {
    /// An `https://` URL to ask.
    case api(String)
    /// The network says it has no portal (`urn:ietf:params:capport:unrestricted`).
    case unrestricted
    /// Why the announcement is not asked, in one sentence.
    case refused(String)

    /// The longest URI taken (an RA option holds 2 KiB at most).
    package static let maxLength = 2048

    /// From the option's bytes: the URI, then NULs to the option's end.
    package init(uri bytes: [UInt8]) {
        var bytes = bytes[...]
        while bytes.last == 0 { bytes = bytes.dropLast() }
        guard bytes.count <= Self.maxLength, !bytes.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
            self = .refused("the announced captive-portal API is not a plain URL (\(bytes.count) bytes)")
            return
        }
        self.init(uri: String(decoding: bytes, as: UTF8.self))
    }

    package init(uri: String) {
        let text = uri.trimmingSpaces
        if text == CaptivePortal.unrestricted {
            self = .unrestricted
        } else if text.count > Self.maxLength || text.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) {
            self = .refused("the announced captive-portal API is not a plain URL")
        } else if !Self.isHTTPS(text) {
            self = .refused("the announced captive-portal API '\(Self.quoted(text))' is not an https:// URL")
        } else {
            self = .api(text)
        }
    }

    /// Whether `url` is an `https://` URL with a host: the only kind the API
    /// is asked at, and the only kind the sign-in page is opened on.
    package static func isHTTPS(_ url: String) -> Bool {
        guard url.utf8.count > 8, url.prefix(8).lowercased() == "https://" else { return false }
        let host = url.dropFirst(8).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !host.isEmpty && !url.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E })
    }

    /// At most 80 characters of a network's text, for a reason.
    package static func quoted(_ text: String) -> String {
        text.count <= 80 ? text : String(text.prefix(77)) + "..."
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = self[...]
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
