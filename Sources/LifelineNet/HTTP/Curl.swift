import CCurl
import Glibc
import LifelineCore
import Synchronization

/// Owns one libcurl easy handle, like every C wrapper here: created in `init`, cleaned up in
/// `deinit`; errors come back as `HTTPFailure`. Use it on one thread at a time.
package final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    /// libcurl wants its global set-up once, before any thread uses it.
    private static let globalInit: CURLcode = lifeline_curl_global_init(LIFELINE_CURL_GLOBAL_DEFAULT)

    package struct SetupError: Error, CustomStringConvertible {
        package var description: String
    }

    package init() throws {
        // libcurl is loaded the first time a probe needs it.
        try CurlLibrary.load()
        let code = Self.globalInit
        guard code == CURLE_OK else { throw SetupError(description: "curl_global_init failed: \(String(cString: lifeline_curl_easy_strerror(code)))") }
        guard let h = lifeline_curl_easy_init() else { throw SetupError(description: "curl_easy_init failed") }
        handle = h
    }

    deinit {
        lifeline_curl_easy_cleanup(handle)
        if let headerList { lifeline_curl_slist_free_all(headerList) }
    }

    /// Performs `request` on the calling thread (it blocks for up to the timeout).
    /// Setting `cancelled` wakes the transfer at once and stops it: the thread is
    /// free for the next probe right away, not at libcurl's next progress
    /// callback (up to a second later while a connection waits for answers).
    package func perform(_ request: HTTPRequest, cancelled: CancelFlag) -> Result<HTTPReply, HTTPFailure> {
        let sink = TransferSink(cancelled: cancelled, limit: min(request.bodyWanted, HTTPRequest.bodyLimit))
        var errorBuffer = [CChar](repeating: 0, count: Int(LIFELINE_CURL_ERROR_SIZE) + 1)
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        let user = box.toOpaque()
        let timeoutMs = max(1, Int(request.timeout.milliseconds.rounded(.up)))
        let connectTimeoutMs = min(timeoutMs, max(1, Int((request.connectTimeout ?? request.timeout).milliseconds.rounded(.up))))

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            var setup = [
                lifeline_curl_set_ptr(handle, CURLOPT_ERRORBUFFER, errors.baseAddress),
                lifeline_curl_set_str(handle, CURLOPT_URL, request.url),
                lifeline_curl_set_str(handle, CURLOPT_PROTOCOLS_STR, request.httpsOnly ? "https" : "http,https"),
                lifeline_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                // No SIGALRM for DNS timeouts: the daemon is multi-threaded.
                lifeline_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
                // A lookup still running at the timeout is left to finish on its
                // own thread. Otherwise libcurl waits for it when the transfer
                // ends, and glibc asks a silent resolver for 10 s (two tries of
                // 5 s) whatever our timeout: a DNS outage would take four times
                // as long to show, and hold up the next probe.
                lifeline_curl_set_long(handle, CURLOPT_QUICK_EXIT, 1),
                lifeline_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeoutMs),
                lifeline_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMs),
                lifeline_curl_set_long(handle, CURLOPT_IPRESOLVE, request.family.curlValue),
                lifeline_curl_set_str(handle, CURLOPT_USERAGENT, request.userAgent),
                lifeline_curl_set_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1),
                lifeline_curl_set_data_function(handle, CURLOPT_WRITEFUNCTION, curlWriteBody),
                lifeline_curl_set_ptr(handle, CURLOPT_WRITEDATA, user),
                lifeline_curl_set_data_function(handle, CURLOPT_HEADERFUNCTION, curlWriteHeader),
                lifeline_curl_set_ptr(handle, CURLOPT_HEADERDATA, user),
                lifeline_curl_set_long(handle, CURLOPT_NOPROGRESS, 0),
                lifeline_curl_set_xferinfo_function(handle, curlProgress),
                lifeline_curl_set_ptr(handle, CURLOPT_XFERINFODATA, user),
            ]
            // A caching proxy must not answer from its cache.
            if headerList == nil {
                headerList = lifeline_curl_slist_append(nil, "Cache-Control: no-cache")
                if let accept = request.accept { headerList = lifeline_curl_slist_append(headerList, "Accept: \(accept)") }
            }
            if let caFile = request.caFile { setup.append(lifeline_curl_set_str(handle, CURLOPT_CAINFO, caFile)) }
            setup.append(lifeline_curl_set_slist(handle, CURLOPT_HTTPHEADER, headerList))
            if !request.interface.isEmpty {
                // A name: SO_BINDTODEVICE, falling back to the interface's address.
                setup.append(lifeline_curl_set_str(handle, CURLOPT_INTERFACE, request.interface))
            }
            if let bad = setup.first(where: { $0 != CURLE_OK }) { return bad }
            return performWakeably(cancelled: cancelled, sink: sink)
        }
        let message = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }

        // A blocker's 0.0.0.0 or :: leads the connection to this machine
        // itself: whatever came of it, the name was blocked.
        var primary: UnsafeMutablePointer<CChar>?
        _ = lifeline_curl_get_str(handle, CURLINFO_PRIMARY_IP, &primary)
        if let primary, !sink.wasCancelled, PlainHTTPLookup.isUnspecified(String(cString: primary)),
           !PlainHTTPProxy.fromEnvironment().applies(to: FailedLayer.Target(url: request.url).host) {
            return .failure(HTTPFailure(url: request.url, code: Int(CURLE_COULDNT_RESOLVE_HOST.rawValue), kind: .blocked,
                                      message: String(cString: primary), stage: .resolving))
        }

        if code != CURLE_OK && !(code == CURLE_WRITE_ERROR && sink.truncated) {
            let text = message.isEmpty ? String(cString: lifeline_curl_easy_strerror(code)) : message
            return .failure(HTTPFailure(url: request.url, code: Int(code.rawValue), kind: kind(of: code, cancelled: sink.wasCancelled),
                                      message: text, stage: stage(https: request.url.lowercased().hasPrefix("https:"))))
        }
        var status = 0
        _ = lifeline_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var total: curl_off_t = 0
        _ = lifeline_curl_get_off(handle, CURLINFO_TOTAL_TIME_T, &total)
        var connected: curl_off_t = 0
        _ = lifeline_curl_get_off(handle, CURLINFO_CONNECT_TIME_T, &connected)
        var redirect: UnsafeMutablePointer<CChar>?
        _ = lifeline_curl_get_str(handle, CURLINFO_REDIRECT_URL, &redirect)
        return .success(HTTPReply(
            status: status, headers: sink.headers, body: sink.body, truncated: sink.truncated,
            redirect: redirect.map { String(cString: $0) }, rttMs: Double(total) / 1000,
            connectMs: connected > 0 ? Double(connected) / 1000 : nil
        ))
    }

    /// `curl_easy_perform`, but through a multi handle: its wait
    /// (`curl_multi_poll`) is what `CancelFlag.set` interrupts with
    /// `curl_multi_wakeup`.
    private func performWakeably(cancelled: CancelFlag, sink: TransferSink) -> CURLcode {
        guard let multi = lifeline_curl_multi_init() else { return CURLE_OUT_OF_MEMORY }
        defer { lifeline_curl_multi_cleanup(multi) }
        guard lifeline_curl_multi_add_handle(multi, handle) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { lifeline_curl_multi_remove_handle(multi, handle) }
        cancelled.attach(multi)
        defer { cancelled.detach() }
        var running: Int32 = 1
        while true {
            guard lifeline_curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running == 0 { break }
            if cancelled.isSet {
                sink.wasCancelled = true
                return CURLE_ABORTED_BY_CALLBACK
            }
            // libcurl's own timers (the transfer's timeout) cut the wait short.
            guard lifeline_curl_multi_poll(multi, nil, 0, 1000, nil) == CURLM_OK else { return CURLE_FAILED_INIT }
        }
        var left: Int32 = 0
        while let message = lifeline_curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    private func kind(of code: CURLcode, cancelled: Bool) -> HTTPFailure.Kind {
        if cancelled { return .cancelled }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = lifeline_curl_get_long(handle, CURLINFO_OS_ERRNO, &osError)
            return osError == Int(EHOSTUNREACH) || osError == Int(ENETUNREACH) ? .unreachable : .refused
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .dns
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2,
             CURLE_HTTP2_STREAM, CURLE_PARTIAL_FILE:
            return .noReply
        default: return .other
        }
    }

    /// How far the failed transfer got: libcurl leaves a phase's time at zero
    /// until that phase is done (name lookup, TCP connect, TLS handshake).
    private func stage(https: Bool) -> HTTPFailure.Stage {
        var resolved: curl_off_t = 0, connected: curl_off_t = 0, secured: curl_off_t = 0
        _ = lifeline_curl_get_off(handle, CURLINFO_NAMELOOKUP_TIME_T, &resolved)
        _ = lifeline_curl_get_off(handle, CURLINFO_CONNECT_TIME_T, &connected)
        _ = lifeline_curl_get_off(handle, CURLINFO_APPCONNECT_TIME_T, &secured)
        if resolved == 0 { return .resolving }
        if connected == 0 { return .connecting }
        if https, secured == 0 { return .handshaking }
        return .exchanging
    }
}

extension AddressFamily {
    package var curlValue: Int {
        switch self {
        case .any: Int(LIFELINE_CURL_IPRESOLVE_WHATEVER)
        case .ipv4: Int(LIFELINE_CURL_IPRESOLVE_V4)
        case .ipv6: Int(LIFELINE_CURL_IPRESOLVE_V6)
        }
    }
}

/// Set from any thread to stop a transfer: it wakes the transfer's wait at once.
package final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    /// The multi handle of the transfer under way; `curl_multi_wakeup` is the one
    /// call libcurl allows on it from another thread, and the lock keeps it from
    /// racing the handle's cleanup.
    private let multi = Mutex<MultiHandle?>(nil)

    /// Only ever used under the lock above.
    private struct MultiHandle: @unchecked Sendable {
        package let pointer: UnsafeMutableRawPointer
    }

    package func set() {
        multi.withLock { multi in
            flag.store(true, ordering: .relaxed)
            if let multi { _ = lifeline_curl_multi_wakeup(multi.pointer) }
        }
    }

    package var isSet: Bool { flag.load(ordering: .relaxed) }

    package func attach(_ handle: UnsafeMutableRawPointer) {
        let multiHandle = MultiHandle(pointer: handle)
        multi.withLock { $0 = multiHandle }
    }

    package func detach() { multi.withLock { $0 = nil } }
}

/// Collects one transfer's reply; reached from libcurl's callbacks through a
/// retained opaque pointer, on the transfer's thread only.
private final class TransferSink {
    package let cancelled: CancelFlag
    package var body: [UInt8] = []
    package var headers: [String] = []
    package var truncated = false
    package var wasCancelled = false
    /// Body bytes kept; the transfer stops past them.
    package let limit: Int

    package init(cancelled: CancelFlag, limit: Int) {
        self.cancelled = cancelled
        self.limit = limit
    }
}

/// Keeps at most the sink's limit; returning less than offered makes libcurl stop
/// the transfer (CURLE_WRITE_ERROR), so a 10 MB reply costs what the probe needs.
private func curlWriteBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
    let offered = size * count
    let room = sink.limit - sink.body.count
    let taken = min(room, offered)
    data.withMemoryRebound(to: UInt8.self, capacity: offered) { bytes in
        sink.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: taken))
    }
    if taken < offered {
        sink.truncated = true
        return taken
    }
    return offered
}

private func curlWriteHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
    let trimmed = String(line.trimmingSpaces())
    if trimmed.hasPrefix("HTTP/") {
        sink.headers.removeAll()  // a new response (after 100 Continue) starts
    } else if !trimmed.isEmpty, sink.headers.count < HTTPRequest.headerLimit {
        sink.headers.append(trimmed)
    }
    return length
}

private func curlProgress(_ user: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t) -> Int32 {
    guard let user else { return 0 }
    let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
    if sink.cancelled.isSet {
        sink.wasCancelled = true
        return 1
    }
    return 0
}
