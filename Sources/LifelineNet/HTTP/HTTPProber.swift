import Glibc
import LifelineCore
import LifelinePlatform

/// Carries the probe's HTTP requests. A plain `http://` URL that no proxy
/// applies to (the default check URL: one GET every 30 s, a 24-byte answer)
/// goes through the probe's own small HTTP/1.1 client, so the idle daemon
/// need not load libcurl and the libraries it brings; `https://`, any URL a
/// proxy from the environment applies to, and every form the own client
/// does not take stay with libcurl. `lifeline diagnose` makes the same
/// choice, so its report matches what the daemon does.
package enum HTTPProber {
    package static func fetch(_ request: HTTPRequest) async -> Result<HTTPReply, HTTPFailure> {
        if !request.httpsOnly, let url = ownClientURL(request.url) {
            // Never blocks: its waits go through the process's descriptor
            // waiter, so in the daemon the thread that wakes for the reply is
            // the one that goes on with the probe.
            return await PlainHTTPExchange.perform(request, url: url, waiter: DescriptorWaiting.current)
        }
        return await CurlThreads.fetch(request)
    }

    /// The URL when the own client takes it, nil when libcurl does.
    package static func ownClientURL(_ url: String, proxy: PlainHTTPProxy = .fromEnvironment()) -> PlainHTTPURL? {
        guard let plain = PlainHTTPURL(url), !proxy.applies(to: plain.host) else { return nil }
        return plain
    }

    /// `fetch` for a caller that may block (`lifeline diagnose` walks its
    /// layers one after another on the main thread, never on a thread that
    /// runs tasks): the calling thread waits for the answer.
    package static func fetchBlocking(_ request: HTTPRequest) -> Result<HTTPReply, HTTPFailure> {
        let answer = BlockingAnswer<Result<HTTPReply, HTTPFailure>>()
        Task { answer.give(await fetch(request)) }
        return answer.take()
    }
}

/// libcurl's transfers, on threads of their own, never on the threads that
/// run tasks: `curl_easy_perform` blocks for up to the timeout. Probes never
/// overlap, so one thread serves them all; a cancelled probe is abandoned at
/// once by its caller and its transfer stops at once, so the next probe does
/// not queue behind it.
private enum CurlThreads {
    private static let thread = SerialThread(name: "lifeline-probe")
    /// IPv6 has its own, so the two families are probed side by side, one probe each at most.
    private static let thread6 = SerialThread(name: "lifeline-probe6")

    package static func fetch(_ request: HTTPRequest) async -> Result<HTTPReply, HTTPFailure> {
        let thread = request.family == .ipv6 ? thread6 : thread
        let cancelled = CancelFlag()
        do {
            return try await withTaskCancellationHandler {
                try await thread.run { () -> Result<HTTPReply, HTTPFailure> in
                    do {
                        return try CurlEasy().perform(request, cancelled: cancelled)
                    } catch {
                        // libcurl could not be set up (not installed): nothing was sent,
                        // and it is no fault of the network's, so the layer named is HTTP's.
                        return .failure(HTTPFailure(url: request.url, code: -1, kind: .other, message: "\(error)", stage: .exchanging))
                    }
                }
            } onCancel: {
                cancelled.set()
            }
        } catch {
            return .failure(HTTPFailure(url: request.url, code: -1, kind: .cancelled, message: "cancelled"))
        }
    }
}

/// One value handed from a task to a thread that blocks until it comes.
private final class BlockingAnswer<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is written once before the semaphore is posted and
    // read once after it is taken.
    private var value: Value?
    private let given: UnsafeMutablePointer<sem_t>

    package init() {
        given = .allocate(capacity: 1)
        sem_init(given, 0, 0)
    }

    deinit {
        sem_destroy(given)
        given.deallocate()
    }

    package func give(_ value: Value) {
        self.value = value
        sem_post(given)
    }

    package func take() -> Value {
        while sem_wait(given) != 0 {}  // EINTR
        return value!
    }
}
