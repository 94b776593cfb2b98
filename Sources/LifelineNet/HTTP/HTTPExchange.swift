import LifelineCore

/// What one HTTP exchange produced: the reply (possibly cut at `bodyLimit`), or
/// a transfer error.
package struct HTTPReply: Sendable, Equatable {
    package var status: Int
    /// Header lines of the final response, without the status line.
    package var headers: [String]
    /// At most `HTTPRequest.bodyLimit` bytes.
    package var body: [UInt8]
    /// The body was longer than the limit and the transfer was stopped there.
    package var truncated: Bool
    /// Absolute target of a redirect (libcurl resolves a relative `Location`).
    package var redirect: String?
    /// Round trip of the whole exchange, milliseconds.
    package var rttMs: Double
    /// From the start until the connection was up (name lookup included),
    /// milliseconds; nil when unknown.
    package var connectMs: Double? = nil

    package func header(named name: String) -> String? {
        for line in headers {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].trimmingSpaces().lowercased() == name.lowercased() {
                return String(line[line.index(after: colon)...].trimmingSpaces())
            }
        }
        return nil
    }
}

/// A failed transfer, from libcurl or the own client (which uses the same
/// codes, so one explanation serves both): the code and message, naming the URL.
package struct HTTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case timeout, refused, dns, cancelled, other
        /// The connect failed with "no route to host" or "network unreachable":
        /// often the router not answering ARP or neighbour discovery.
        case unreachable
        /// The TLS handshake failed (certificate, protocol).
        case tls
        /// Connected, but the server closed or garbled its reply.
        case noReply
        /// The resolver answered the unspecified address (0.0.0.0 or ::) for
        /// the name, as DNS blockers do; the message is that address.
        case blocked
    }

    /// libcurl's code for a proxy name that does not resolve.
    package static let couldNotResolveProxy = 5

    /// How far a transfer got before it failed, in the order it goes.
    package enum Stage: Int, Sendable, Comparable {
        case resolving, connecting, handshaking, exchanging
        package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    package var url: String
    package var code: Int
    package var kind: Kind
    /// curl's own words ("Failed to connect to 10.0.0.1 port 80 after 0 ms: Couldn't connect to server").
    package var message: String
    package var stage: Stage = .resolving

    package var description: String { "\(url): \(message) (curl error \(code))" }
}

/// What to send. Only http and https; redirects are reported, never followed.
package struct HTTPRequest: Sendable {
    package static let bodyLimit = 64 * 1024
    package static let headerLimit = 200

    package var url: String
    package var timeout: Duration
    /// How long the name lookup and the connect may take; nil: `timeout`.
    package var connectTimeout: Duration?
    package var interface: String
    package var family: AddressFamily
    package var userAgent: String
    /// The body bytes worth reading, at most `bodyLimit`: the probe needs only
    /// as many as its expected prefix has (a portal's page is read no further
    /// than it takes to see it is not the check server's answer).
    package var bodyWanted = HTTPRequest.bodyLimit
    /// The `Accept` header, nil for none (a captive-portal API is asked for
    /// `application/captive+json`).
    package var accept: String?
    /// Only `https://`, never plain http (a captive-portal API: what it says
    /// is believed only from the host its certificate names).
    package var httpsOnly = false
    /// A file of CA certificates to trust instead of the system's; nil: the system's.
    package var caFile: String?

    package init(
        url: String, timeout: Duration, connectTimeout: Duration? = nil, interface: String = "",
        family: AddressFamily = .any, userAgent: String = "Lifeline connectivity check"
    ) {
        self.url = url
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.interface = interface
        self.family = family
        self.userAgent = userAgent
    }
}

