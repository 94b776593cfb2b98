import CSocket

/// glibc's socket types and message flags, from one owner (`Sources/CSocket`):
/// Swift finds glibc's own `SOCK_STREAM` or `MSG_NOSIGNAL` in whichever C
/// module included its header first, so a file that names them directly can
/// fail to build on a clean machine. Code uses these instead; `SourceRulesTests`
/// fails on a direct use.
public enum SocketConstants {
    public static let stream = LL_SOCK_STREAM
    public static let datagram = LL_SOCK_DGRAM
    public static let raw = LL_SOCK_RAW
    public static let closeOnExec = LL_SOCK_CLOEXEC
    public static let nonBlocking = LL_SOCK_NONBLOCK
    /// A write to a closed peer returns EPIPE instead of raising SIGPIPE.
    public static let noSignal = LL_MSG_NOSIGNAL
    /// `recv` returns a datagram's real length, however little of it fitted.
    public static let truncate = LL_MSG_TRUNC
    public static let dontWait = LL_MSG_DONTWAIT
}
