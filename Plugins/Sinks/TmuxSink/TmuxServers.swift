import Glibc
import LifelineCore
import LifelinePlatform

/// One tmux server's socket. A server restarted on the same path makes a new
/// socket file: the inode and change time tell it from the one already served
/// (the inode alone does not: a file system reuses a freed inode number at once).
/// tmux also changes the socket's mode when clients attach or detach; that reads
/// as a new server too and costs one more, harmless, `set-option`.
struct TmuxSocket: Hashable, Sendable {
    var path: String
    var inode: UInt64
    var changed: Int64 = 0  // st_ctim in nanoseconds
}

/// Finds the user's tmux servers: every socket in tmux's socket folder, the way
/// tmux itself names it (`${TMUX_TMPDIR:-/tmp}/tmux-$UID`). Reading a folder is a
/// few system calls: cheap enough to repeat every second, and it never wakes tmux.
enum TmuxServers {
    static func directory(environment: [String: String] = Environment.current, uid: uid_t = getuid()) -> String {
        var base = environment["TMUX_TMPDIR"] ?? ""
        if base.isEmpty { base = "/tmp" }
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        return (base == "/" ? "" : base) + "/tmux-\(uid)"
    }

    /// The sockets in `directory` owned by `uid`, sorted by path; empty when the
    /// folder does not exist (no tmux server has run yet).
    static func scan(_ directory: String, uid: uid_t = getuid()) -> [TmuxSocket] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [TmuxSocket] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let path = directory + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK, st.st_uid == uid else { continue }
            found.append(TmuxSocket(path: path, inode: UInt64(st.st_ino),
                                    changed: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)))
        }
        return found.sorted { $0.path < $1.path }
    }

    /// False for a socket nobody listens on: tmux leaves its socket behind when a
    /// server is killed, and such a socket must cost neither a tmux process nor a
    /// log line. Anything but "refused"/"gone" counts as listening.
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, SocketConstants.stream | SocketConstants.closeOnExec | SocketConstants.nonBlocking, 0)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 || (errno != ECONNREFUSED && errno != ENOENT)
    }
}
