import Glibc

/// Small file helpers on plain POSIX calls (no Foundation), with errors that
/// name the file and say what failed.
public enum Files {
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        public var path: String
        public var operation: String
        public var errno: Int32
        /// What is wrong, when the system's message for `errno` would not say it.
        public var detail: String?
        public init(path: String, operation: String, errno: Int32, detail: String? = nil) {
            self.path = path
            self.operation = operation
            self.errno = errno
            self.detail = detail
        }
        public var description: String { "\(operation) \(path): \(detail ?? String(cString: strerror(errno)))" }
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

    /// The last `limit` bytes of a file (all of it when smaller).
    public static func readTail(_ path: String, limit: Int) throws(Error) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Error(path: path, operation: "cannot open", errno: errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Error(path: path, operation: "cannot inspect", errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw Error(path: path, operation: "not a regular file:", errno: EINVAL) }
        let start = max(0, Int(st.st_size) - limit)
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) - start)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(start + done)) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw Error(path: path, operation: "cannot read", errno: errno) }
            if n == 0 { break }  // shrank meanwhile
            done += n
        }
        return Array(bytes[0..<done])
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

    /// fsyncs a folder, so that files created or renamed in it keep their names
    /// after a crash.
    public static func syncDirectory(_ path: String) throws(Error) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Error(path: path, operation: "cannot open folder", errno: errno) }
        defer { close(fd) }
        // EINVAL: a file system that has nothing to sync for folders.
        guard fsync(fd) == 0 || errno == EINVAL else { throw Error(path: path, operation: "cannot fsync folder", errno: errno) }
    }

    /// Cuts a file open for reading and writing back to just after its last
    /// newline (an empty file stays empty) and returns the new size: a line
    /// half-written when the system crashed is dropped instead of gluing itself
    /// to the next one.
    public static func cutAfterLastNewline(_ fd: Int32, path: String) throws(Error) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Error(path: path, operation: "cannot inspect", errno: errno) }
        let size = Int(st.st_size)
        var end = size
        var chunk = [UInt8](repeating: 0, count: 4096)
        while end > 0 {
            let start = max(0, end - chunk.count)
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, end - start, off_t(start)) }
            if n < 0, errno == EINTR { continue }
            guard n == end - start else { throw Error(path: path, operation: "cannot read", errno: n < 0 ? errno : EIO) }
            if let last = chunk[0..<n].lastIndex(of: UInt8(ascii: "\n")) {
                end = start + last + 1
                break
            }
            end = start
        }
        if end < size, ftruncate(fd, off_t(end)) != 0 { throw Error(path: path, operation: "cannot cut the torn last line of", errno: errno) }
        return end
    }

    /// Replaces `path` atomically: readers see the old file or the new one, never a
    /// half-written one (write a temporary file beside it, then rename). The file
    /// gets exactly `mode`, whatever the umask. No fsync: callers rewrite these
    /// files often, and the next write replaces one lost to a crash.
    public static func replaceAtomically(_ path: String, with text: String, mode: mode_t = 0o600) throws(Error) {
        try replaceAtomically(path, with: text.utf8, mode: mode)
    }

    public static func replaceAtomically(_ path: String, with bytes: some Collection<UInt8>, mode: mode_t = 0o600) throws(Error) {
        // The temporary name ends in the pid, never in the file's own suffix: a
        // reader that picks files by suffix (node_exporter's `*.prom`) skips it.
        let temporary = path + ".tmp.\(getpid())"
        // O_EXCL|O_NOFOLLOW: a file or symlink planted under that name is never written through.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Error(path: temporary, operation: "cannot create", errno: errno) }
        do throws(Error) {
            guard fchmod(fd, mode) == 0 else { throw Error(path: temporary, operation: "cannot chmod", errno: errno) }
            try writeAll(fd, bytes, path: temporary)
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

    /// Creates `path` and the folders leading to it, and makes sure no other user
    /// can change what is in it. Every folder from `privateRoot` down (the runtime
    /// folder, e.g. `/tmp/lifeline-1000`, and below) must be created here (0700)
    /// or already be ours, not a symbolic link, and not writable by group or
    /// others: someone who made `/tmp/lifeline-1000` before us could otherwise
    /// swap its contents for links into our files. The folders above it may
    /// belong to root, and be writable by everyone only with the sticky bit (`/tmp`).
    public static func makePrivateDirectory(_ path: String, privateRoot: String) throws(Error) {
        let root = privateRoot.split(separator: "/").count
        var current = ""
        for (depth, part) in path.split(separator: "/").enumerated() {
            current += "/" + part
            let mustBeOurs = depth + 1 >= root
            if mkdir(current, 0o700) == 0 { continue }
            guard errno == EEXIST else { throw Error(path: current, operation: "cannot create folder", errno: errno) }
            try checkFolder(current, mustBeOurs: mustBeOurs)
        }
    }

    private static func checkFolder(_ path: String, mustBeOurs: Bool) throws(Error) {
        func refuse(_ what: String) -> Error {
            Error(path: path, operation: "refusing to keep private files in", errno: EPERM, detail: what)
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw Error(path: path, operation: "cannot inspect", errno: errno) }
        let type = st.st_mode & S_IFMT
        if type == S_IFLNK { throw refuse("it is a symbolic link") }
        guard type == S_IFDIR else { throw refuse("it is not a folder") }
        let mode = String(st.st_mode & 0o7777, radix: 8)
        if mustBeOurs {
            guard st.st_uid == getuid() else { throw refuse("it belongs to uid \(st.st_uid), not to us (uid \(getuid()))") }
            guard st.st_mode & 0o022 == 0 else { throw refuse("group or others can write to it (mode \(mode))") }
        } else {
            guard st.st_uid == 0 || st.st_uid == getuid() else { throw refuse("it belongs to uid \(st.st_uid)") }
            guard st.st_mode & 0o022 == 0 || st.st_mode & S_ISVTX != 0 else {
                throw refuse("group or others can write to it without the sticky bit (mode \(mode))")
            }
        }
    }

    /// Refuses what must not be at the path of a private file we replace: a
    /// symbolic link, a FIFO or anything but a regular file, or a file of another
    /// user. Nothing there is fine.
    public static func requireOwnFileOrNothing(_ path: String) throws(Error) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw Error(path: path, operation: "cannot inspect", errno: errno)
        }
        let type = st.st_mode & S_IFMT
        let what = type == S_IFLNK ? "a symbolic link" : type == S_IFIFO ? "a FIFO" : type == S_IFREG ? nil : "not a regular file"
        if let what { throw Error(path: path, operation: "refusing to replace", errno: EPERM, detail: "it is \(what)") }
        guard st.st_uid == getuid() else {
            throw Error(path: path, operation: "refusing to replace", errno: EPERM, detail: "it belongs to uid \(st.st_uid)")
        }
    }

    /// Reads a private file of ours without ever blocking or following a link:
    /// nil unless it is a regular file owned by this user and at most `limit` bytes.
    /// For files in a folder that another user may have prepared.
    public static func readOwnFile(_ path: String, limit: Int) -> [UInt8]? {
        // O_NONBLOCK: opening a FIFO planted there would otherwise wait for a writer.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == getuid(), Int(st.st_size) <= limit
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            done += n
        }
        return done <= limit ? Array(bytes[0..<done]) : nil
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
