import Foundation
import Testing

/// Private files never go where another user can reach them: without
/// `XDG_RUNTIME_DIR` the runtime folder is `/tmp/lifeline-UID`, which anyone can
/// create first.
@Suite(.serialized) struct RuntimeFolderTests {
    /// `lifeline status` with the fixture's environment, bounded by `timeout`: a
    /// status that blocks shows as exit 124 instead of hanging the test run.
    /// `withoutRuntimeDir` leaves `XDG_RUNTIME_DIR` unset and points `TMPDIR` at
    /// the given folder, where the fallback runtime folder then is.
    func status(_ f: DaemonFixture, withoutRuntimeDir temporary: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let unset = temporary.map { ["-u", "XDG_RUNTIME_DIR", "TMPDIR=\($0)"] } ?? []
        return try Harness.run(["timeout", "-k", "1", "5", "env"] + unset + [Harness.binary, "status"], environment: f.environment)
    }

    @Test(.requires(.rootAnd(["useradd", "userdel", "setpriv", "timeout", "mkfifo"]))) func aFallbackFolderMadeByAnotherUserIsRefused() async throws {
        let f = try DaemonFixture()
        // A folder like /tmp (anyone may create in it, sticky) of this test's own,
        // so that a /tmp/lifeline-UID of a daemon run earlier cannot get in the way.
        let temporary = f.path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        #expect(chmod(temporary, 0o1777) == 0)
        let folder = "\(temporary)/lifeline-\(getuid())"
        let user = "llt\(UInt32.random(in: 10000...99999))"
        let added = try Harness.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", user])
        try #require(added.status == 0, "useradd: \(added.stderr)")
        defer { _ = try? Harness.run(["userdel", user]) }
        // The other user gets there first: a folder anyone can write, and a FIFO
        // where the state file goes (reading it would block).
        let planted = try Harness.run([
            "setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups", "sh", "-c",
            "mkdir \(folder) \(folder)/lifeline && chmod 0777 \(folder) \(folder)/lifeline && mkfifo -m 0666 \(folder)/lifeline/state.json",
        ])
        try #require(planted.status == 0, "planting: \(planted.stderr)")

        f.commandPrefix = ["env", "-u", "XDG_RUNTIME_DIR", "TMPDIR=\(temporary)"]
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("refusal logged") {
            f.daemonLog.contains("refusing to keep private files in \(folder): it belongs to uid")
        }
        var st = stat()
        #expect(lstat(folder + "/lifeline/state.json", &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO, "the FIFO was replaced")

        let clock = ContinuousClock()
        let started = clock.now
        let r = try status(f, withoutRuntimeDir: temporary)
        #expect(r.status == 3, "\(r)")
        #expect(r.stderr.contains("no daemon running"))
        #expect(started.duration(to: clock.now) < .seconds(3))
    }

    @Test(.requires(.tools(["timeout", "mkfifo"]))) func aFIFOAtTheStateFilePathIsRefusedAndStatusDoesNotWaitOnIt() async throws {
        let f = try DaemonFixture()
        let folder = f.path("run/lifeline")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(mkfifo(f.stateFilePath, 0o600) == 0)
        try f.start()
        defer { f.stopNow() }
        await Harness.waitUntil("refusal logged") {
            f.daemonLog.contains("refusing to replace \(f.stateFilePath): it is a FIFO")
        }
        let r = try status(f)
        #expect(r.status == 3, "\(r)")
    }

    @Test(.requires(.root)) func aStateFileOfAnotherUserIsNotBelieved() async throws {
        let f = try DaemonFixture()
        let folder = f.path("run/lifeline")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A well-formed state naming a live process (this test), but not our file.
        let record = #"{"state":"online","previous":"unknown","since":1700000000000000,"interface":"eth0","kind":"ethernet","reason":"","rtt_ms":-1,"metered":false,"sequence":1,"pid":\#(getpid()),"muted_until":0}"#
        try record.write(toFile: f.stateFilePath, atomically: false, encoding: .utf8)
        #expect(try status(f).status == 0)  // ours: believed
        chown(f.stateFilePath, 65534, 65534)
        let r = try status(f)
        #expect(r.status == 3, "\(r)")
    }
}
