import Glibc

/// Lines written straight to standard output's file descriptor: a bar reading a
/// pipe sees each at once (stdout through a pipe is otherwise block-buffered).
public enum StandardOutput {
    /// Returns false when the reader has gone (EPIPE; callers ignore SIGPIPE).
    @discardableResult
    public static func writeLine(_ text: String) -> Bool {
        var line = text + "\n"
        return line.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }
}
