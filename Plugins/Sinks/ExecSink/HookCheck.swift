import CProcess
import Glibc

/// Whether a hook file may run, decided again before every run (a file can
/// change between two transitions). A hook runs with the daemon's rights, so
/// only a file that nobody else can have written or put there runs:
/// - the file: owned by the daemon's user or by root (who can change the
///   user's files anyway), writable by no one else, not setuid or setgid, a
///   regular executable file;
/// - the folder it is listed in: owned by the user or root and writable by no
///   one else, sticky or not. The sticky bit stops others from renaming or
///   removing what is not theirs, not from adding entries, and there every
///   entry added is a hook;
/// - every symbolic link on the way, followed one step at a time: owned by the
///   user or root, in a folder that passes the next rule. The kernel's
///   protected_symlinks setting would refuse a stranger's link only in some
///   folders, and is not on everywhere;
/// - every folder above those, and from the file's up to `/` (or up to the
///   home folder): owned by the user or root and writable by no one else, or
///   sticky like `/tmp` (others cannot replace what is not theirs there).
///   Whoever can write to such a folder could put any program in the hook's place.
///
/// The file is opened once, checked through that descriptor, and that very
/// descriptor is what runs (`OpenedHook`), so it cannot be swapped between the
/// check and the run.
enum HookCheck {
    struct Refused: Error, Equatable, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "hook \(path) refused: \(reason)" }
    }

    /// The path to run (symbolic links resolved), or why not.
    static func check(_ path: String, uid: uid_t = getuid(), home: String? = homeFolder()) -> Result<String, Refused> {
        switch open(path, uid: uid, home: home) {
        case .success(let opened):
            opened.close()
            return .success(opened.target)
        case .failure(let refused):
            return .failure(refused)
        }
    }

    /// The hook opened and checked, ready to run from its descriptor, or why not.
    static func open(_ path: String, uid: uid_t = getuid(), home: String? = homeFolder()) -> Result<OpenedHook, Refused> {
        func refuse(_ reason: String) -> Result<OpenedHook, Refused> { .failure(Refused(path: path, reason: reason)) }
        let checker = Checker(uid: uid, home: home)
        if let reason = checker.unsafeFolder(parent(of: path), listed: true) { return refuse(reason) }
        let target: String
        switch checker.resolve(path) {
        case .success(let resolved): target = resolved
        case .failure(let why): return refuse(why.reason)
        }
        if let reason = checker.unsafeRealFolder(parent(of: target)) { return refuse(reason) }
        // No link is followed any more: the path is resolved and its folders are
        // the user's own, so what it names now is what was checked above.
        let fd = Glibc.open(target, Int32(LIFELINE_O_PATH) | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return refuse("cannot open \(target): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            return refuse("cannot stat \(target): \(why)")
        }
        if let reason = unsafeFile(info, shown: target == path ? "" : " (\(target))", uid: uid, target: target) {
            close(fd)
            return refuse(reason)
        }
        return .success(OpenedHook(descriptor: fd, target: target, device: info.st_dev, inode: info.st_ino,
                                   interpreter: interpreter(of: fd)))
    }

    /// The `#!` line of the file behind `fd` as the kernel reads it (the
    /// interpreter, and the rest of the line as one argument), or nil when the
    /// file does not start with one (a compiled program).
    static func interpreter(of fd: Int32) -> [String]? {
        let readable = Glibc.open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard readable >= 0 else { return nil }
        defer { close(readable) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(readable, $0.baseAddress, $0.count) }
        guard count > 2, buffer[0] == UInt8(ascii: "#"), buffer[1] == UInt8(ascii: "!") else { return nil }
        let line = buffer[2..<count].prefix { $0 != UInt8(ascii: "\n") }
        let isBlank = { (b: UInt8) in b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        let trimmed = line.drop(while: isBlank).reversed().drop(while: isBlank).reversed()
        guard !trimmed.isEmpty else { return nil }
        let program = trimmed.prefix { !isBlank($0) }
        let rest = trimmed.dropFirst(program.count).drop(while: isBlank)
        return [String(decoding: program, as: UTF8.self)] + (rest.isEmpty ? [] : [String(decoding: rest, as: UTF8.self)])
    }

    private static func unsafeFile(_ info: stat, shown: String, uid: uid_t, target: String) -> String? {
        let mode = info.st_mode
        if mode & S_IFMT != S_IFREG { return "not a regular file\(shown)" }
        if info.st_uid != uid, info.st_uid != 0 {
            return "owned by uid \(info.st_uid)\(shown), not by the daemon's user (uid \(uid)) or root"
        }
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            let who = mode & S_IWOTH != 0 ? "others" : "its group"
            return "writable by \(who)\(shown) (mode \(String(mode & 0o7777, radix: 8)))"
        }
        if mode & (S_ISUID | S_ISGID) != 0 { return "setuid or setgid\(shown)" }
        if mode & (S_IXUSR | S_IXGRP | S_IXOTH) == 0 || access(target, X_OK) != 0 { return "not executable\(shown)" }
        return nil
    }

    /// Why `folder` or a folder above it (up to `/`, or up to `home`) lets
    /// someone else replace what it holds; nil when none does. `listed`: the
    /// folder hooks are listed in, which must not be writable by others even
    /// when sticky.
    static func unsafeFolder(_ folder: String, uid: uid_t, home: String?, listed: Bool = false) -> String? {
        Checker(uid: uid, home: home).unsafeFolder(folder, listed: listed)
    }

    /// The checks, for one daemon user.
    struct Checker {
        let uid: uid_t
        let home: String?

        struct Unsafe: Error { var reason: String }

        /// `folder` resolved link by link, then checked as `unsafeRealFolder` does.
        func unsafeFolder(_ folder: String, listed: Bool = false) -> String? {
            switch resolve(folder) {
            case .success(let real): unsafeRealFolder(real, listed: listed)
            case .failure(let why): why.reason
            }
        }

        /// Why `real` (a path without links) or a folder above it lets someone
        /// else replace what it holds; nil when none does.
        func unsafeRealFolder(_ real: String, listed: Bool = false) -> String? {
            var current = real
            var first = true
            while true {
                var info = stat()
                guard stat(current, &info) == 0 else {
                    return "cannot stat the folder \(current): \(String(cString: strerror(errno)))"
                }
                if !trusted(info.st_uid) {
                    return "the folder \(current) is owned by uid \(info.st_uid), not by the daemon's user (uid \(uid)) or root"
                }
                let mode = info.st_mode
                if mode & (S_IWGRP | S_IWOTH) != 0, mode & S_ISVTX == 0 || (listed && first) {
                    let who = mode & S_IWOTH != 0 ? "others" : "its group"
                    return "the folder \(current) (owner uid \(info.st_uid)) is writable by \(who) (mode \(String(mode & 0o7777, radix: 8)))"
                }
                if current == "/" || current == home { return nil }
                current = HookCheck.parent(of: current)
                first = false
            }
        }

        /// `path` with every symbolic link resolved, one component at a time, as
        /// realpath(3) does, refusing any link owned by someone other than the
        /// user or root, or kept in a folder someone else can change.
        func resolve(_ path: String) -> Result<String, Unsafe> {
            var pending = Self.components(path.hasPrefix("/") ? path : Self.workingFolder() + "/" + path)
            var resolved = "/"
            var links = 0
            while !pending.isEmpty {
                let name = pending.removeFirst()
                if name == "." { continue }
                if name == ".." {
                    resolved = HookCheck.parent(of: resolved)
                    continue
                }
                let candidate = resolved == "/" ? "/" + name : resolved + "/" + name
                var info = stat()
                guard lstat(candidate, &info) == 0 else {
                    return .failure(Unsafe(reason: "cannot resolve it: \(candidate): \(String(cString: strerror(errno)))"))
                }
                guard info.st_mode & S_IFMT == S_IFLNK else {
                    resolved = candidate
                    continue
                }
                links += 1
                if links > 40 { return .failure(Unsafe(reason: "cannot resolve it: too many symbolic links")) }
                if !trusted(info.st_uid) {
                    return .failure(Unsafe(reason: "the link \(candidate) is owned by uid \(info.st_uid), not by the daemon's user (uid \(uid)) or root"))
                }
                if let reason = unsafeRealFolder(resolved) { return .failure(Unsafe(reason: reason)) }
                guard let target = Self.readLink(candidate) else {
                    return .failure(Unsafe(reason: "cannot resolve it: \(candidate): \(String(cString: strerror(errno)))"))
                }
                if target.hasPrefix("/") { resolved = "/" }
                pending = Self.components(target) + pending
            }
            return .success(resolved)
        }

        private func trusted(_ owner: uid_t) -> Bool { owner == uid || owner == 0 }

        private static func components(_ path: String) -> [String] {
            path.split(separator: "/").map(String.init)
        }

        private static func readLink(_ path: String) -> String? {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(path, &buffer, buffer.count - 1)
            guard count >= 0 else { return nil }
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        private static func workingFolder() -> String {
            guard let cwd = getcwd(nil, 0) else { return "/" }
            defer { free(cwd) }
            return String(cString: cwd)
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func homeFolder() -> String? {
        guard let home = getenv("HOME"), let resolved = realpath(home, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A hook file opened (`O_PATH`) and checked; what runs is this descriptor's
/// file. Closed by whoever runs it (`close()`).
struct OpenedHook {
    let descriptor: Int32
    /// The path it was opened at, symbolic links resolved (for log lines and argv[0]).
    let target: String
    let device: dev_t
    let inode: ino_t
    /// A script's `#!` line; nil for a compiled program.
    let interpreter: [String]?

    func close() { _ = Glibc.close(descriptor) }
}
