import Glibc

/// Whether a hook file may run, decided again before every run (a file can
/// change between two transitions). A hook runs with the daemon's rights, so
/// only a file that nobody else can have written runs: owned by the daemon's
/// user or by root (who can change the user's files anyway), writable by no one
/// else, not setuid or setgid, a regular executable file. A symbolic link is
/// followed and the file it leads to is what gets checked and run.
enum HookCheck {
    struct Refused: Error, Equatable, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "hook \(path) refused: \(reason)" }
    }

    /// The path to run (symbolic links resolved), or why not.
    static func check(_ path: String, uid: uid_t = getuid()) -> Result<String, Refused> {
        guard let resolved = realpath(path, nil) else {
            return .failure(Refused(path: path, reason: "cannot resolve it: \(String(cString: strerror(errno)))"))
        }
        let target = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(target, &info) == 0 else {
            return .failure(Refused(path: path, reason: "cannot stat \(target): \(String(cString: strerror(errno)))"))
        }
        let shown = target == path ? "" : " (\(target))"
        let mode = info.st_mode
        if mode & S_IFMT != S_IFREG {
            return .failure(Refused(path: path, reason: "not a regular file\(shown)"))
        }
        if info.st_uid != uid, info.st_uid != 0 {
            return .failure(Refused(path: path, reason: "owned by uid \(info.st_uid)\(shown), not by the daemon's user (uid \(uid)) or root"))
        }
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            let who = mode & S_IWOTH != 0 ? "others" : "its group"
            return .failure(Refused(path: path, reason: "writable by \(who)\(shown) (mode \(String(mode & 0o7777, radix: 8)))"))
        }
        if mode & (S_ISUID | S_ISGID) != 0 {
            return .failure(Refused(path: path, reason: "setuid or setgid\(shown)"))
        }
        if mode & (S_IXUSR | S_IXGRP | S_IXOTH) == 0 || access(target, X_OK) != 0 {
            return .failure(Refused(path: path, reason: "not executable\(shown)"))
        }
        return .success(target)
    }
}
