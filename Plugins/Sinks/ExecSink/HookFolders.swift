import Glibc
import LifelineCore

/// A hook script found in one of the hook folders.
struct Hook: Equatable, Sendable {
    /// The file name: what orders hooks, and what a file in an earlier folder
    /// shares with the one it hides.
    var name: String
    var path: String
    /// The states the hook runs on, from its name (`50-vpn.offline`); nil: every state.
    var states: Set<ConnectivityState>?

    func runs(on state: ConnectivityState) -> Bool { states?.contains(state) ?? true }
}

/// Finds the hooks: every file of every folder, a name in an earlier folder
/// hiding the same name in a later one (the user's folder comes before the
/// system's), in byte order of their names, as `LC_ALL=C ls` lists them.
/// Read afresh on every transition, so a hook dropped in runs without a restart,
/// and a missing folder costs one failed `opendir`.
enum HookFolders {
    static func scan(_ folders: [String]) -> [Hook] {
        var seen = Set<String>()
        var hooks: [Hook] = []
        for folder in folders {
            for name in names(in: folder) where !isIgnored(name) && seen.insert(name).inserted {
                hooks.append(Hook(name: name, path: folder + "/" + name, states: stateFilter(name)))
            }
        }
        return hooks.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    static func names(in folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Files an editor or the package manager leaves beside a hook are not hooks:
    /// hidden files, `name~` backups and dpkg's `.dpkg-old`/`.dpkg-new`/`.dpkg-dist`.
    static func isIgnored(_ name: String) -> Bool {
        name.hasPrefix(".") || name.hasSuffix("~")
            || [".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp"].contains { name.hasSuffix($0) }
    }

    /// `50-vpn.offline` runs only on `offline`, `50-sync.online` only on `online`,
    /// `50-x.limited,portal` on either. A suffix that is not a list of states
    /// (`.sh`, `.py`) filters nothing: the hook runs on every state.
    static func stateFilter(_ name: String) -> Set<ConnectivityState>? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        var states = Set<ConnectivityState>()
        for word in name[name.index(after: dot)...].split(separator: ",", omittingEmptySubsequences: false) {
            guard let state = ConnectivityState(rawValue: String(word)), state != .unknown else { return nil }
            states.insert(state)
        }
        return states
    }
}
