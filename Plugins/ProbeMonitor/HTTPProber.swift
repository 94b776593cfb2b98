import CEpoll
import Glibc
import LifelineCore

/// Runs HTTP probes on a thread of their own, never on Swift's cooperative
/// pool: a probe blocks for up to its timeout. Probes never overlap, so one
/// thread serves them all; a cancelled probe is abandoned at once by its caller
/// and its transfer stops at once, so the next probe does not queue behind it.
enum HTTPProber {
    private static let thread = SerialThread(name: "lifeline-probe")
    /// IPv6 has its own, so the two families are probed side by side, one probe each at most.
    private static let thread6 = SerialThread(name: "lifeline-probe6")

    static func fetch(_ request: HTTPRequest) async -> Result<HTTPReply, CurlError> {
        let thread = request.family == .ipv6 ? thread6 : thread
        let cancelled = ExchangeCancel()
        do {
            return try await withTaskCancellationHandler {
                try await thread.run { () -> Result<HTTPReply, CurlError> in
                    do {
                        return try HTTPTransport.perform(request, cancelled: cancelled)
                    } catch {
                        // The client could not be set up (libcurl missing): nothing was sent,
                        // and it is no fault of the network's, so the layer named is HTTP's.
                        return .failure(CurlError(url: request.url, code: -1, kind: .other, message: "\(error)", stage: .exchanging))
                    }
                }
            } onCancel: {
                cancelled.set()
            }
        } catch {
            return .failure(CurlError(url: request.url, code: -1, kind: .cancelled, message: "cancelled"))
        }
    }
}

/// Which client carries a request. A plain `http://` URL that no proxy
/// applies to (the default check URL: one GET every 30 s, a 24-byte answer)
/// goes through the probe's own small HTTP/1.1 client, so the idle daemon
/// need not load libcurl and the libraries it brings; `https://`, any URL a
/// proxy from the environment applies to, and every form the own client
/// does not take stay with libcurl. `lifeline diagnose` makes the same
/// choice, so its report matches what the daemon does.
enum HTTPTransport {
    static func perform(_ request: HTTPRequest, cancelled: ExchangeCancel) throws -> Result<HTTPReply, CurlError> {
        if let url = ownClientURL(request.url) {
            return PlainHTTPExchange.perform(request, url: url, cancel: cancelled)
        }
        return try CurlEasy().perform(request, cancelled: cancelled.flag)
    }

    /// The URL when the own client takes it, nil when libcurl does.
    static func ownClientURL(_ url: String, proxy: PlainHTTPProxy = .fromEnvironment()) -> PlainHTTPURL? {
        guard let plain = PlainHTTPURL(url), !proxy.applies(to: plain.host) else { return nil }
        return plain
    }
}

/// Stops an exchange from another thread, whichever client carries it: sets
/// the `CancelFlag` libcurl's transfer watches (and wakes its wait), and
/// makes `wakeDescriptor` (an eventfd) readable for the own client's `poll`.
final class ExchangeCancel: Sendable {
    let flag = CancelFlag()
    /// -1 when no eventfd could be made (out of descriptors): the flag alone
    /// then stops the exchange at its deadline (`poll` ignores -1).
    private let event: Int32

    init() {
        event = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    }

    deinit {
        if event >= 0 { close(event) }
    }

    func set() {
        flag.set()
        if event >= 0 { _ = eventfd_write(event, 1) }
    }

    var isSet: Bool { flag.isSet }

    /// Readable once `set()` was called.
    var wakeDescriptor: Int32 { event }
}
