import Foundation
@testable import ExecSink
import LifelineCore
import Testing

/// Which files of the hook folders run, in what order, and which are refused.
@Suite struct HookFilesTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("hookfiles-\(UUID().uuidString.prefix(8))").path

    func folder(_ name: String) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @discardableResult
    func script(_ path: String, mode: mode_t = 0o700, body: String = "#!/bin/sh\nexit 0\n") throws -> String {
        try body.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func hooksRunInByteOrderOfNameAndTheUsersFileHidesTheSystemsOfTheSameName() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let user = try folder("user"), system = try folder("system")
        for name in ["50-b", "10-a", "Z-upper", "90-z.offline"] { try script(user + "/" + name) }
        for name in ["50-b", "20-system", "05-first"] { try script(system + "/" + name) }
        // Editor and package-manager leftovers are not hooks.
        for name in [".hidden", "30-x~", "40-y.dpkg-old", "41-y.dpkg-new", "42-y.dpkg-dist"] { try script(user + "/" + name) }

        let hooks = HookFolders.scan([user, system, root + "/missing"])
        #expect(hooks.map(\.name) == ["05-first", "10-a", "20-system", "50-b", "90-z.offline", "Z-upper"])
        #expect(hooks.first { $0.name == "50-b" }?.path == user + "/50-b")
        #expect(hooks.first { $0.name == "20-system" }?.path == system + "/20-system")
    }

    @Test func aNameEndingInStatesRunsOnlyOnThose() {
        #expect(HookFolders.stateFilter("50-vpn.offline") == [.offline])
        #expect(HookFolders.stateFilter("60-x.limited,portal") == [.limited, .portal])
        #expect(HookFolders.stateFilter("10-sync.sh") == nil)
        #expect(HookFolders.stateFilter("10-plain") == nil)
        #expect(HookFolders.stateFilter("10-x.online,bogus") == nil)
        #expect(HookFolders.stateFilter("10-x.unknown") == nil)
        #expect(HookFolders.stateFilter("10-x.") == nil)
        let hook = Hook(name: "50-vpn.offline", path: "/x", states: [.offline])
        #expect(hook.runs(on: .offline) && !hook.runs(on: .online))
        #expect(Hook(name: "10-a", path: "/x", states: nil).runs(on: .portal))
    }

    @Test func anExecutableFileOfTheUserRunsAndEveryUnsafeOneIsRefusedWithItsReason() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = try folder("hooks")
        let good = try script(dir + "/good")
        #expect(HookCheck.check(good) == .success(good))

        func reason(_ path: String) -> String? {
            if case .failure(let refused) = HookCheck.check(path) {
                #expect(refused.path == path)
                #expect(refused.description.hasPrefix("hook \(path) refused: "))
                return refused.reason
            }
            return nil
        }
        #expect(reason(try script(dir + "/world", mode: 0o777))?.hasPrefix("writable by others") == true)
        #expect(reason(try script(dir + "/group", mode: 0o770))?.hasPrefix("writable by its group") == true)
        #expect(reason(try script(dir + "/setuid", mode: 0o4700)) == "setuid or setgid")
        #expect(reason(try script(dir + "/setgid", mode: 0o2700)) == "setuid or setgid")
        #expect(reason(try script(dir + "/plain", mode: 0o600)) == "not executable")
        try FileManager.default.createDirectory(atPath: dir + "/folder", withIntermediateDirectories: false)
        #expect(reason(dir + "/folder") == "not a regular file")
        mkfifo(dir + "/fifo", 0o700)
        #expect(reason(dir + "/fifo") == "not a regular file")
        #expect(reason(dir + "/missing")?.hasPrefix("cannot resolve it") == true)
        // A link is followed: the file it leads to is what is checked and run.
        symlink(good, dir + "/link-good")
        #expect(HookCheck.check(dir + "/link-good") == .success(good))
        symlink(dir + "/world", dir + "/link-world")
        #expect(reason(dir + "/link-world")?.hasPrefix("writable by others (\(dir)/world)") == true)
        symlink(dir + "/nowhere", dir + "/link-dangling")
        #expect(reason(dir + "/link-dangling")?.hasPrefix("cannot resolve it") == true)
    }

    /// Links are followed one step at a time, a relative one from its own
    /// folder, as realpath(3) would; every folder a link sits in is checked,
    /// and the folder hooks are listed in may not be writable by others even
    /// when it is sticky.
    @Test func linksAreFollowedOneStepAtATimeAndEveryFolderOnTheWayIsChecked() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hooks = try folder("hooks"), bin = try folder("bin")
        let real = try script(bin + "/real")
        func reason(_ path: String) -> String? {
            if case .failure(let refused) = HookCheck.check(path) { return refused.reason }
            return nil
        }
        symlink("../bin/real", hooks + "/relative")
        symlink(hooks + "/relative", hooks + "/chain")
        symlink(bin + "/../bin/./real", hooks + "/dots")
        for name in ["relative", "chain", "dots"] {
            #expect(HookCheck.check(hooks + "/" + name) == .success(real), "\(name)")
        }
        symlink(hooks + "/loop-b", hooks + "/loop-a")
        symlink(hooks + "/loop-a", hooks + "/loop-b")
        #expect(reason(hooks + "/loop-a") == "cannot resolve it: too many symbolic links")
        // A link kept in a folder others can write, on the way to a good file.
        let open = try folder("open")
        chmod(open, 0o777)
        symlink(real, open + "/via")
        symlink(open + "/via", hooks + "/through-open")
        #expect(reason(hooks + "/through-open") == "the folder \(open) (owner uid \(getuid())) is writable by others (mode 777)")
        // Sticky is not enough for the folder hooks are listed in: anyone can add one.
        let sticky = try folder("sticky")
        chmod(sticky, 0o1777)
        let mine = try script(sticky + "/10-mine")
        #expect(reason(mine) == "the folder \(sticky) (owner uid \(getuid())) is writable by others (mode 1777)")
        // Above the folder, a sticky one is fine (others cannot replace what is not theirs).
        let below = try folder("sticky/mine")
        chmod(below, 0o755)
        let good = try script(below + "/10-good")
        #expect(HookCheck.check(good) == .success(good))
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func aFileOwnedByAnotherUserIsRefusedAndOneOwnedByRootIsNot() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = try folder("hooks")
        let theirs = try script(dir + "/theirs")
        chown(theirs, 65534, 65534)
        guard case .failure(let refused) = HookCheck.check(theirs, uid: 0) else {
            Issue.record("a file of uid 65534 ran")
            return
        }
        #expect(refused.reason == "owned by uid 65534, not by the daemon's user (uid 0) or root")
        // A daemon of uid 1000 runs its own files and root's, not those of uid 65534.
        chown(theirs, 1000, 1000)
        #expect(HookCheck.check(theirs, uid: 1000) == .success(theirs))
        let roots = try script(dir + "/roots")
        #expect(HookCheck.check(roots, uid: 1000) == .success(roots))
        #expect(HookCheck.check(theirs, uid: 1001) != .success(theirs))
    }
}

/// A hook's output in the daemon's log: clean, and bounded whatever it prints.
@Suite struct HookOutputTests {
    func feed(_ output: inout HookOutput, _ text: String) -> [String] {
        Array(text.utf8).withUnsafeBytes { output.feed($0) }
    }

    @Test func linesAreCleanedOfControlCharactersAndTheLastLineIsKept() {
        var output = HookOutput()
        #expect(feed(&output, "one\r\ntwo \u{1B}]0;title\u{07}\nthree") == ["one", "two ^[]0;title^G"])
        #expect(output.finish() == "three")
        #expect(output.finish() == nil)
    }

    @Test func aFloodKeepsAFewShortLinesAndOnlyCountsTheRest() {
        var output = HookOutput()
        let long = String(repeating: "y", count: 10_000) + "\n"
        var logged: [String] = []
        for _ in 0..<1_000 { logged += feed(&output, long) }
        #expect(logged.count == HookOutput.maxLines)
        #expect(logged.allSatisfy { $0.utf8.count == HookOutput.maxLineBytes + "…".utf8.count && $0.hasSuffix("…") })
        // Only the kept part of each logged line, and its newline, is not counted.
        let kept = HookOutput.maxLines * (HookOutput.maxLineBytes + 1)
        #expect(output.discardedBytes == 1_000 * 10_001 - kept)
        #expect(output.finish() == nil)
    }
}
