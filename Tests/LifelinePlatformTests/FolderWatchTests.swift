import Foundation
import LifelinePlatform
import Synchronization
import Testing

/// A folder watch says when the folder's entries change, and waits for a
/// folder that is not there yet.
@Suite struct FolderWatchTests {
    final class Count: Sendable {
        let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var now: Int { value.withLock { $0 } }
    }

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("folder-watch-\(UUID().uuidString.prefix(8))").path

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func aNewEntryIsSaid() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let calls = Count()
        let watch = try FolderWatch(directory: root) { calls.add() }
        defer { watch.stop() }
        // Once when the watch is armed: what was there before is worth a look.
        try await waitUntil { calls.now == 1 }
        FileManager.default.createFile(atPath: root + "/socket", contents: nil)
        try await waitUntil { calls.now >= 2 }
    }

    @Test func aFolderThatIsNotThereYetIsWaitedFor() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let calls = Count()
        let watch = try FolderWatch(directory: root + "/later") { calls.add() }
        defer { watch.stop() }
        FileManager.default.createFile(atPath: root + "/unrelated", contents: nil)
        try await FileManager.default.createDirectory(atPath: root + "/later", withIntermediateDirectories: false)
        try await waitUntil { calls.now >= 1 }
        FileManager.default.createFile(atPath: root + "/later/socket", contents: nil)
        try await waitUntil { calls.now >= 2 }
    }

    @Test func waitingForAFileReturnsWhenItIsCreated() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/bus"
        let returned = Count()
        // The fallback is an hour: returning within the test's bound means the creation was seen.
        let waiting = Task {
            await FolderWatch.waitUntilExists(path, fallback: .seconds(3600))
            returned.add()
        }
        defer { waiting.cancel() }
        FileManager.default.createFile(atPath: path, contents: nil)
        try await waitUntil { returned.now == 1 }
    }

    @Test func aStoppedWatchSaysNothingMore() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let before = Self.inotifyDescriptors()
        let calls = Count()
        let watch = try FolderWatch(directory: root) { calls.add() }
        try await waitUntil { calls.now == 1 }
        watch.stop()
        // Its descriptor closes when its task ends; a later change reaches nobody.
        try await waitUntil { Self.inotifyDescriptors() <= before }
        FileManager.default.createFile(atPath: root + "/socket", contents: nil)
        #expect(calls.now == 1)
    }

    /// The process's open inotify descriptors.
    static func inotifyDescriptors() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify" }.count
    }
}
