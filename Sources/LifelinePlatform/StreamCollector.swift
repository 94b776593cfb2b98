import CEpoll
import Glibc

/// The loop body of `Child.collect`: a child's standard input, output and
/// error, non-blocking, in one epoll set whose own descriptor is readable
/// while any of them is ready, so one wait (a `poll`, or the executor's)
/// covers all three.
struct StreamCollector {
    private var input: Int32
    private let bytes: [UInt8]
    private var written = 0
    private var output: Int32
    private var errors: Int32
    private let outputLimit: Int
    private let errorLimit: Int
    /// The epoll set; -1 when none could be made (out of descriptors), and
    /// the loop then looks every few milliseconds.
    private let watch: Int32
    var result = Child.Collected()

    init(input: Int32, bytes: [UInt8], output: Int32, errors: Int32, outputLimit: Int, errorLimit: Int) {
        (self.input, self.bytes, self.output, self.errors) = (input, bytes, output, errors)
        (self.outputLimit, self.errorLimit) = (outputLimit, errorLimit)
        watch = epoll_create1(Int32(EPOLL_CLOEXEC))
        if input >= 0, bytes.isEmpty {
            close(input)
            self.input = -1
        }
        for (fd, events) in [(self.input, EPOLLOUT.rawValue), (output, EPOLLIN.rawValue), (errors, EPOLLIN.rawValue)] where fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
            if watch >= 0 { _ = epoll_ctl(watch, EPOLL_CTL_ADD, fd, &event) }
        }
    }

    /// The descriptor to wait on (readable while a stream is ready).
    var readiness: Int32 { watch >= 0 ? watch : (output >= 0 ? output : errors) }

    /// When to look again: the deadline, or soon where there is no epoll set
    /// (the one descriptor waited on may not be the one that turns ready).
    func nextLook(_ deadline: ContinuousClock.Instant) -> ContinuousClock.Instant {
        watch >= 0 ? deadline : min(deadline, .now + .milliseconds(10))
    }

    /// Moves what is ready; false once output and error have ended, or the
    /// output went past its limit.
    mutating func pump() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        if input >= 0 { send() }
        while output >= 0 {
            let n = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if n > 0 {
                guard result.output.count + n <= outputLimit else {
                    result.outputTooLarge = true
                    return false
                }
                result.output += chunk[0..<n]
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                output = closed(output)
            } else if errno == EAGAIN {
                break
            }
        }
        while errors >= 0 {
            let n = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
            if n > 0 {
                result.errors += chunk[0..<min(n, max(0, errorLimit - result.errors.count))]
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                errors = closed(errors)
            } else if errno == EAGAIN {
                break
            }
        }
        return output >= 0 || errors >= 0
    }

    private mutating func send() {
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                var n = Glibc.send(input, raw.baseAddress! + written, raw.count - written, SocketConstants.noSignal)
                if n < 0, errno == ENOTSOCK { n = write(input, raw.baseAddress! + written, raw.count - written) }
                return n
            }
            if n > 0 {
                written += n
            } else if errno == EAGAIN {
                return
            } else if errno != EINTR {
                break  // the child stopped reading for good
            }
        }
        input = closed(input)
    }

    /// Closes `fd`, which leaves the epoll set; -1, to store in its place.
    private func closed(_ fd: Int32) -> Int32 {
        if watch >= 0 { _ = epoll_ctl(watch, EPOLL_CTL_DEL, fd, nil) }
        close(fd)
        return -1
    }

    /// Closes what is left open; the result.
    mutating func finish() -> Child.Collected {
        for fd in [input, output, errors] where fd >= 0 { close(fd) }
        (input, output, errors) = (-1, -1, -1)
        if watch >= 0 { close(watch) }
        return result
    }
}
