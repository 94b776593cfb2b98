import Glibc

/// Small file helpers on plain POSIX calls (no Foundation), with errors that
/// name the file and say what failed.
public enum Files {
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        public var path: String
        public var operation: String
        public var errno: Int32
        public init(path: String, operation: String, errno: Int32) {
            self.path = path
            self.operation = operation
            self.errno = errno
        }
        public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
        public var isNotFound: Bool { errno == ENOENT }
    }

    /// Reads a whole file of at most `limit` bytes.
    public static func read(_ path: String, limit: Int = 1 << 20) throws(Error) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Error(path: path, operation: "cannot open", errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Error(path: path, operation: "cannot read", errno: errno)
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            if bytes.count > limit { throw Error(path: path, operation: "too large to read", errno: EFBIG) }
        }
    }

    public static func readText(_ path: String, limit: Int = 1 << 20) throws(Error) -> String {
        String(decoding: try read(path, limit: limit), as: UTF8.self)
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>, path: String) throws(Error) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let n = array.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Error(path: path, operation: "cannot write", errno: errno)
            }
            offset += n
        }
    }

    /// Replaces `path` atomically: readers see the old file or the new one, never a
    /// half-written one (write a temporary file beside it, then rename).
    public static func replaceAtomically(_ path: String, with text: String, mode: mode_t = 0o600) throws(Error) {
        let temporary = path + ".tmp.\(getpid())"
        // O_EXCL|O_NOFOLLOW: a file or symlink planted under that name is never written through.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Error(path: temporary, operation: "cannot create", errno: errno) }
        do {
            try writeAll(fd, text.utf8, path: temporary)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw Error(path: path, operation: "cannot rename into", errno: e)
        }
    }

    /// `mkdir -p` with `mode` for every folder it creates (0700: private).
    public static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(Error) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, mode) != 0, errno != EEXIST {
                throw Error(path: current, operation: "cannot create folder", errno: errno)
            }
        }
    }

    /// Refuses a folder another user could tamper with: it must belong to us and
    /// not be writable by group or others (a `/tmp/lifeline-UID` made by someone else).
    public static func requirePrivateDirectory(_ path: String) throws(Error) {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw Error(path: path, operation: "cannot inspect", errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o022 == 0 else {
            throw Error(path: path, operation: "refusing to keep private files in (not a folder of ours, or writable by others)", errno: EPERM)
        }
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
