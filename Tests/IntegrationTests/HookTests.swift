import Foundation
import LifelineTestKit
import Testing

/// Hook scripts run by the real daemon, whose state a scripted monitor drives:
/// what each hook received is read back from the files it writes, what the
/// daemon refused or stopped from its log.
@Suite struct HookTests {
    /// The fixture's user hook folder, `$XDG_CONFIG_HOME/lifeline/hooks.d`.
    static func hooksDir(_ f: DaemonFixture) throws -> String {
        let dir = f.path("config/lifeline/hooks.d")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @discardableResult
    static func hook(_ f: DaemonFixture, _ name: String, _ body: String, mode: mode_t = 0o700) throws -> String {
        let path = try hooksDir(f) + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    static func start(_ f: DaemonFixture, _ net: ScriptedNetwork, timeout: String) throws {
        try f.writeConfig(net.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "log"

            [[sink]]
            kind = "exec"
            timeout = "\(timeout)"
            """))
        try f.start()
    }

    static func lines(_ f: DaemonFixture, _ name: String) -> [String] {
        ((try? String(contentsOfFile: f.path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The event log's line for `sequence`, as written.
    static func logLine(_ f: DaemonFixture, sequence: Int) -> String? {
        let text = (try? String(contentsOfFile: f.eventLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).first { line in
            let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (event?["sequence"] as? Int) == sequence
        }
    }

    /// Alive and not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// `VmRSS` or `VmHWM` of a process, in KiB.
    static func memory(_ pid: Int32, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") }
    }

    @Test func hooksRunInNameOrderWithTheEventInTheirEnvironmentAndTheLogLineOnStandardInput() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        let out = f.root.path + "/"
        let record = """
            n=$(basename "$0")
            echo "$$" > "\(out)$n.pid.$LIFELINE_SEQUENCE"
            env | grep '^LIFELINE_' | sort > "\(out)$n.env.$LIFELINE_SEQUENCE"
            cat > "\(out)$n.stdin.$LIFELINE_SEQUENCE"
            printf '%s\\n' "$@" > "\(out)$n.args.$LIFELINE_SEQUENCE"
            """
        for name in ["30-c", "10-a", "20-b.offline"] { try Self.hook(f, name, record) }
        try Self.start(f, net, timeout: "5s")
        try net.say("offline", interface: "eth0", reason: "cable pulled")
        await Harness.waitUntil("hooks on offline") {
            ["10-a", "20-b.offline", "30-c"].allSatisfy { !Self.lines(f, "\($0).args.1").isEmpty }
        }
        try net.say("online", interface: "eth0", reason: "probe answered")
        await Harness.waitUntil("hooks on online") {
            ["10-a", "30-c"].allSatisfy { !Self.lines(f, "\($0).args.2").isEmpty }
        }
        await f.stop()

        let pids = ["10-a", "20-b.offline", "30-c"].map { Int(Self.lines(f, "\($0).pid.1").first ?? "") ?? 0 }
        #expect(pids.allSatisfy { $0 > 0 } && pids == pids.sorted(), "hooks started out of name order: \(pids)")
        #expect(Self.lines(f, "20-b.offline.args.2").isEmpty, "a hook named for offline ran on online")
        for (name, sequence) in [("10-a", 1), ("30-c", 2)] {
            let logged = try #require(Self.logLine(f, sequence: sequence))
            #expect(Self.lines(f, "\(name).stdin.\(sequence)") == [logged])
            let event = try #require(JSONSerialization.jsonObject(with: Data(logged.utf8)) as? [String: Any])
            let env = Self.lines(f, "\(name).env.\(sequence)")
            for (key, field) in [("STATE", "state"), ("PREVIOUS", "previous"), ("INTERFACE", "interface"),
                                 ("REASON", "reason"), ("SINCE", "since"), ("SEQUENCE", "sequence")] {
                #expect(env.contains("LIFELINE_\(key)=\(event[field].map { "\($0)" } ?? "?")"), "\(name) \(key): \(env)")
            }
            let args = try String(contentsOfFile: f.path("\(name).args.\(sequence)"), encoding: .utf8)
            #expect(args == "\(event["state"] as? String ?? "?")\n\(event["interface"] as? String ?? "?")\n")
        }
        #expect(Self.lines(f, "10-a.env.1").contains("LIFELINE_STATE=offline"))
        #expect(Self.lines(f, "10-a.env.1").contains("LIFELINE_REASON=cable pulled"))
    }

    @Test func aHookHasOnlyItsOwnThreeDescriptorsNotWhatTheDaemonInherited() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        try Self.hook(f, "10-descriptors", "ls /proc/self/fd > \"\(f.root.path)/descriptors.$LIFELINE_SEQUENCE\"")
        // Open without close-on-exec while the daemon starts, as a login shell or a
        // session manager may leave one: the daemon inherits it.
        let inherited = open("/dev/null", O_RDONLY)
        try #require(inherited > 3)
        do {
            defer { close(inherited) }
            try Self.start(f, net, timeout: "5s")
        }
        try net.say("offline", interface: "eth0", reason: "cable pulled")
        await Harness.waitUntil("the hook ran") { !Self.lines(f, "descriptors.1").isEmpty }
        await f.stop()
        // 0, 1 and 2 from the daemon; 3 is `ls` reading the folder.
        #expect(Self.lines(f, "descriptors.1") == ["0", "1", "2", "3"],
                "the daemon inherited descriptor \(inherited); the hook had: \(Self.lines(f, "descriptors.1"))")
    }

    @Test(.requires(.root)) func aHookWritableByOthersAndOneOwnedByAnotherUserAreRefusedAndNamedInTheLog() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        let open = try Self.hook(f, "10-open", "touch \(f.path("open-ran"))", mode: 0o777)
        let theirs = try Self.hook(f, "20-theirs", "touch \(f.path("theirs-ran"))")
        chown(theirs, 65534, 65534)
        try Self.hook(f, "30-good", "touch \(f.path("good-ran"))")
        try Self.start(f, net, timeout: "5s")
        try net.say("offline")
        await Harness.waitUntil("the good hook") { FileManager.default.fileExists(atPath: f.path("good-ran")) }
        await Harness.waitUntil("both refusals logged") {
            f.daemonLog.contains("hook \(open) refused: writable by others (mode 777)")
                && f.daemonLog.contains("hook \(theirs) refused: owned by uid 65534, not by the daemon's user (uid 0) or root")
        }
        await f.stop()
        #expect(!FileManager.default.fileExists(atPath: f.path("open-ran")))
        #expect(!FileManager.default.fileExists(atPath: f.path("theirs-ran")))
    }

    /// Folders and links a stranger (uid 65534) could have put a hook in: a
    /// sticky folder anyone can write (like /tmp), a link of theirs in the
    /// user's own folder, and the user's link to a link of theirs. None runs,
    /// and the log names the folder or link and its owner. The kernel's
    /// protected_symlinks plays no part: no link here is in a sticky
    /// world-writable folder, so the kernel would follow every one of them.
    @Test(.requires(.root)) func aStickyHooksFolderAndAStrangersLinksAreRefusedAndNamedInTheLog() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        // What the stranger's links lead to: a program the user trusts (as
        // /usr/bin/touch would be), which says when it runs.
        try FileManager.default.createDirectory(atPath: f.path("bin"), withIntermediateDirectories: true)
        let touch = f.path("bin/says-it-ran")
        try "#!/bin/sh\necho \"$0\" >> '\(f.path("strangers-ran"))'\n".write(toFile: touch, atomically: false, encoding: .utf8)
        chmod(touch, 0o755)
        let shared = f.path("shared")
        let mine = f.path("mine")
        let theirs = f.path("theirs")
        for dir in [shared, mine, theirs] { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        chmod(shared, 0o1777)
        chmod(mine, 0o755)
        chown(theirs, 65534, 65534)
        // In the sticky folder: a script of the daemon's own user, which anyone could have added.
        let sticky = shared + "/10-sticky"
        try "#!/bin/sh\ntouch '\(f.path("sticky-ran"))'\n".write(toFile: sticky, atomically: false, encoding: .utf8)
        chmod(sticky, 0o700)
        // In the user's folder: the stranger's own link to touch(1).
        let strangersLink = mine + "/20-strangers-link"
        symlink(touch, strangersLink)
        lchown(strangersLink, 65534, 65534)
        // The user's link to a link the stranger keeps in a folder of theirs.
        let relay = theirs + "/relay"
        symlink(touch, relay)
        lchown(relay, 65534, 65534)
        symlink(relay, mine + "/30-via-strangers-link")
        // A good hook, to know when the hooks have had their turn.
        let good = mine + "/40-good"
        try "#!/bin/sh\ntouch '\(f.path("good-ran"))'\n".write(toFile: good, atomically: false, encoding: .utf8)
        chmod(good, 0o700)
        try f.writeConfig(net.config(debounceMs: 50, sinks: """
            [[sink]]
            kind = "log"

            [[sink]]
            kind = "exec"
            folders = ["\(shared)", "\(mine)"]
            """))
        try f.start()
        try net.say("offline")
        await Harness.waitUntil("the good hook") { FileManager.default.fileExists(atPath: f.path("good-ran")) }
        let refusals = [
            "hook \(sticky) refused: the folder \(shared) (owner uid 0) is writable by others (mode 1777)",
            "hook \(strangersLink) refused: the link \(strangersLink) is owned by uid 65534, not by the daemon's user (uid 0) or root",
            "hook \(mine)/30-via-strangers-link refused: the link \(relay) is owned by uid 65534, not by the daemon's user (uid 0) or root",
        ]
        await Harness.waitUntil("every refusal logged") { refusals.allSatisfy { f.daemonLog.contains($0) } }
        await f.stop()
        for refusal in refusals { #expect(f.daemonLog.contains(refusal), "not logged: \(refusal)") }
        #expect(!FileManager.default.fileExists(atPath: f.path("sticky-ran")))
        let ran = (try? String(contentsOfFile: f.path("strangers-ran"), encoding: .utf8)) ?? ""
        #expect(ran.isEmpty, "a stranger's link ran: \(ran)")
    }

    @Test func aHungHookIsKilledAtItsTimeoutAndTheLogSinkGetsEveryTransitionOnTime() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        let sleeper = try Self.hook(f, "10-sleep", "echo $$ >> \(f.path("sleeper-pids")); sleep 60")
        try Self.start(f, net, timeout: "5s")
        for (n, state) in ["offline", "online", "limited", "online"].enumerated() {
            try net.say(state, interface: "eth0")
            await Harness.waitUntil("transition \(n + 1) in the log") { f.loggedEvents().count == n + 1 }
        }
        // Every line was logged while the hook's first run still hung: the log waits for no hook.
        await Harness.waitUntil("the hook's first run") { !Self.lines(f, "sleeper-pids").isEmpty }
        let hung = Self.lines(f, "sleeper-pids").first.flatMap { Int32($0) }
        #expect(hung.map(Self.isAlive) == true && !f.daemonLog.contains("hook \(sleeper) stopped after"),
                "the log waited for the hung hook")
        #expect(f.loggedStates() == ["offline", "online", "limited", "online"])
        await Harness.waitUntil("the first run stopped") { f.daemonLog.contains("hook \(sleeper) stopped after") }
        #expect(f.daemonLog.contains("(timeout 5s) with SIGTERM"))
        // The newest state ran once the hung run was over; the two in between never did.
        await Harness.waitUntil(timeout: .seconds(5), "the hook's second run") { Self.lines(f, "sleeper-pids").count == 2 }
        let first = try #require(Self.lines(f, "sleeper-pids").first.flatMap { Int32($0) })
        #expect(!Self.isAlive(first))
        await f.stop()
        let second = try #require(Self.lines(f, "sleeper-pids").last.flatMap { Int32($0) })
        #expect(!Self.isAlive(second), "the daemon left its hook running")
        #expect(Self.lines(f, "sleeper-pids").count == 2)
    }

    @Test func aHookThatFloodsItsOutputDoesNotGrowTheDaemonsMemory() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        // 100 MB without a newline, and 100 MB of short lines.
        let zeros = try Self.hook(f, "10-zeros", "head -c 100000000 /dev/zero")
        let yes = try Self.hook(f, "20-yes", "yes | head -c 100000000")
        try Self.start(f, net, timeout: "60s")
        await Harness.waitUntil("daemon up") { FileManager.default.fileExists(atPath: f.stateFilePath) }
        let pid = try #require(f.process?.pid)
        let rssBefore = try #require(Self.memory(pid, "VmRSS"))
        let peakBefore = try #require(Self.memory(pid, "VmHWM"))
        try net.say("offline")
        await Harness.waitUntil(timeout: .seconds(60), "both floods read to their end") {
            f.daemonLog.contains("hook \(zeros) done") && f.daemonLog.contains("hook \(yes) done")
        }
        let rssAfter = try #require(Self.memory(pid, "VmRSS"))
        let peakAfter = try #require(Self.memory(pid, "VmHWM"))
        await f.stop()
        #expect(rssAfter - rssBefore < 8 * 1024, "VmRSS \(rssBefore) → \(rssAfter) KiB")
        #expect(peakAfter - peakBefore < 8 * 1024, "VmHWM \(peakBefore) → \(peakAfter) KiB")
        // Every byte was read, and only a few lines reached the log.
        #expect(f.daemonLog.contains("hook \(zeros): 99999488 more bytes of output not logged"))
        #expect(f.daemonLog.components(separatedBy: "hook \(yes): y").count - 1 == 50)
    }
}
