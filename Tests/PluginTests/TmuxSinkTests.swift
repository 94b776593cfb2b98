import Foundation
import LifelineConfig
import LifelinePlatform
import LifelineTOML
import Logging
import Synchronization
import Testing
@testable import LifelineCore
@testable import TmuxSink

struct TmuxTextTests {
    let now: Int64 = 1_700_000_000_000_000

    func event(_ state: ConnectivityState, interface: String = "wlan0", reason: String = "") -> StateEvent {
        StateEvent(state: state, previous: .unknown, since: now, interface: interface, reason: reason, sequence: 1)
    }

    @Test func defaultIsIconAndStateInTheStateColour() {
        let template = TmuxSink.Config().format
        #expect(TmuxText.status(event(.online), template: template, colors: true, now: now) == "#[fg=green]● online#[fg=default]")
        #expect(TmuxText.status(event(.offline), template: template, colors: true, now: now) == "#[fg=red]○ offline#[fg=default]")
        #expect(TmuxText.status(event(.limited), template: template, colors: true, now: now) == "#[fg=colour208]◐ limited#[fg=default]")
        #expect(TmuxText.status(event(.portal), template: template, colors: true, now: now) == "#[fg=yellow]◍ portal#[fg=default]")
        #expect(TmuxText.status(event(.unknown), template: template, colors: true, now: now) == "#[fg=default]◌ unknown#[fg=default]")
    }

    @Test func coloursOff() {
        #expect(TmuxText.status(event(.offline), template: "{icon} {state}", colors: false, now: now) == "○ offline")
    }

    @Test func valuesAreLiteralTemplateStylesAreKept() {
        let e = event(.limited, interface: "e#[fg=blue]th0", reason: "probe said #(reboot)\nnow")
        let text = TmuxText.status(e, template: "#[bold]{interface}#[nobold] {reason}", colors: false, now: now)
        #expect(text == "#[bold]e##[fg=blue]th0#[nobold] probe said ##(reboot)^Jnow")
    }

    @Test func aTrailingSemicolonSurvivesTmuxArgumentParsing() {
        #expect(TmuxText.status(event(.online), template: "{state};", colors: false, now: now) == "online\\;")
        #expect(TmuxText.argument("a;b") == "a;b")
    }

    @Test func alertNamesStateInterfaceAndReasonLiterally() {
        let e = event(.offline, reason: "route #(gone) 100%")
        #expect(TmuxText.alert(e) == "Lifeline: offline (wlan0) — route ##(gone) 100%%")
        #expect(TmuxText.alert(event(.portal, interface: "")) == "Lifeline: portal")
    }

    /// Each hostile value as the status line's value and as the alert: `#`
    /// doubled in both, `%` doubled in the alert (display-message runs strftime),
    /// control characters visible, long values cut.
    @Test func hostileValuesAreEscapedForEachTmuxSyntax() {
        let long = String(repeating: "x", count: 1024 * 1024)
        let cases: [(value: String, status: String, alert: String)] = [
            ("<b>x</b>", "<b>x</b>", "<b>x</b>"),
            ("a&b", "a&b", "a&b"),
            ("#(touch /tmp/pwned)", "##(touch /tmp/pwned)", "##(touch /tmp/pwned)"),
            ("#{pane_id}", "##{pane_id}", "##{pane_id}"),
            ("#[fg=red]", "##[fg=red]", "##[fg=red]"),
            ("%Y %s 100%", "%Y %s 100%", "%%Y %%s 100%%"),
            ("\u{1b}]0;title\u{07}", "^[]0;title^G", "^[]0;title^G"),
            ("\u{1b}[2J", "^[[2J", "^[[2J"),
            ("ends in ;", "ends in \\;", "ends in \\;"),
            (long, String(repeating: "x", count: 255) + "…", String(repeating: "x", count: 255) + "…"),
        ]
        for (value, status, alert) in cases {
            let e = event(.offline, interface: "", reason: value)
            #expect(TmuxText.status(e, template: "{reason}", colors: false, now: now) == status, "\(value.prefix(30))")
            #expect(TmuxText.alert(e) == "Lifeline: offline — " + alert, "\(value.prefix(30))")
        }
    }

    @Test func durationIsShownToTheMinute() {
        var e = event(.offline)
        e.since = now - 125_000_000
        #expect(TmuxText.status(e, template: "{duration}", colors: false, now: now) == "2m")
        e.since = Int64.min
        #expect(TmuxText.status(e, template: "{duration}", colors: false, now: now) == "2562047788h")
    }
}

struct TmuxServersTests {
    @Test func socketFolderFollowsTmux() {
        #expect(TmuxServers.directory(environment: [:], uid: 1000) == "/tmp/tmux-1000")
        #expect(TmuxServers.directory(environment: ["TMUX_TMPDIR": ""], uid: 1000) == "/tmp/tmux-1000")
        #expect(TmuxServers.directory(environment: ["TMUX_TMPDIR": "/run/user/1000/"], uid: 1000) == "/run/user/1000/tmux-1000")
    }

    @Test func scanFindsSocketsOnlyAndTellsListeningFromDead() throws {
        let dir = "/tmp/lifeline-scan-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(TmuxServers.scan(dir + "/missing").isEmpty)
        _ = FileManager.default.createFile(atPath: dir + "/plain-file", contents: Data())
        let live = try UnixSocket(path: dir + "/live", listen: true)
        defer { live.close() }
        let dead = try UnixSocket(path: dir + "/dead", listen: false)
        dead.close()
        let found = TmuxServers.scan(dir)
        #expect(found.map(\.path) == [dir + "/dead", dir + "/live"])
        #expect(TmuxServers.isListening(dir + "/live"))
        #expect(!TmuxServers.isListening(dir + "/dead"))
        #expect(!TmuxServers.isListening(dir + "/missing"))
    }
}

struct TmuxConfigTests {
    @Test func decodesFromNothingAndRejectsBadValues() throws {
        let empty = try TmuxSink.Config.decode(toml: "")
        #expect(empty == TmuxSink.Config())
        #expect(empty.format == "{icon} {state}" && empty.colors && empty.alert == .auto)
        let set = try TmuxSink.Config.decode(toml: #"format = "{state}"\#ncolors = false\#nalert = "never"\#nalert_duration = "2s""#)
        #expect(set == TmuxSink.Config(format: "{state}", colors: false, alert: .never, alertDuration: .seconds(2)))
        for (bad, key) in [(#"alert = "sometimes""#, "alert"), (#"format = """#, "format"), (#"alert_duration = "10ms""#, "alert_duration")] {
            #expect("\(bad)") { try TmuxSink.Config.decode(toml: bad) } throws: { ($0 as? ConfigError)?.key == key }
        }
    }
}

/// A bound unix socket, listening or not (a dead one, as a killed tmux leaves).
final class UnixSocket {
    let fd: Int32

    init(path: String, listen shouldListen: Bool) throws {
        fd = socket(AF_UNIX, SocketConstants.stream, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        if shouldListen { _ = listen(fd, 4) }
    }

    func close() { _ = Glibc.close(fd) }
}

/// The sink's turns against stand-ins for tmux and dbus-send that record their
/// arguments: what is pushed where, when the alert fires, what is retried.
struct TmuxPusherTests {
    final class Bench {
        let dir: String
        let sockets: String
        let calls: String
        let tmux: String
        var live: [UnixSocket] = []

        init() throws {
            dir = "/tmp/lifeline-pusher-\(UUID().uuidString.prefix(8))"
            sockets = dir + "/tmux-0"
            calls = dir + "/calls"
            try FileManager.default.createDirectory(atPath: sockets, withIntermediateDirectories: true)
            tmux = dir + "/tmux"
            // Fails for a socket named "broken"; lists one client; records every call.
            try """
                #!/bin/sh
                echo "$*" >> '\(calls)'
                case "$2" in */broken) exit 1;; esac
                [ "$3" = list-clients ] && echo /dev/pts/9
                exit 0
                """.write(toFile: tmux, atomically: true, encoding: .utf8)
            chmod(tmux, 0o755)
        }

        func server(_ name: String) throws {
            live.append(try UnixSocket(path: sockets + "/" + name, listen: true))
        }

        func sink(_ config: TmuxSink.Config = TmuxSink.Config(alert: .always)) -> TmuxSink {
            let context = PluginContext(name: "sink tmux", logger: Logger(label: "test"),
                                        paths: Paths(configHome: dir, stateHome: dir, runtimeDir: dir),
                                        control: Bus(clock: ContinuousClock()))
            return TmuxSink(config: config, context: context, socketDirectory: sockets, tmux: tmux)
        }

        /// Every call so far, leaving them for `take` (a sink running meanwhile
        /// may be appending).
        func all() -> [String] {
            let text = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map { $0.replacingOccurrences(of: sockets + "/", with: "") }
        }

        /// Calls since the last look.
        func take() -> [String] {
            let text = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
            unlink(calls)
            return text.split(separator: "\n").map { $0.replacingOccurrences(of: sockets + "/", with: "") }
        }

        deinit {
            live.forEach { $0.close() }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    static let start: Int64 = 1_700_000_000_000_000

    func update(_ state: ConnectivityState, outage: UInt64? = nil, transition: Bool = true, mutedUntil: Int64 = 0,
                notificationServer: Bool? = nil) -> Update {
        let e = StateEvent(state: state, previous: .unknown, since: Self.start, interface: "eth0", reason: "r", sequence: 1)
        let o = outage.map { Outage(id: $0, since: Self.start, worst: state, endedAt: state == .online ? Self.start : nil) }
        return Update(event: e, isTransition: transition, outage: o, mutedUntil: mutedUntil,
                      notificationServerPresent: notificationServer)
    }

    @Test func pushesEachNewValueOnceToEveryServerAndNewServersOnRescan() async throws {
        let bench = try Bench()
        try bench.server("a")
        try bench.server("b")
        var pusher = Pusher(sink: bench.sink())
        await pusher.step(update(.online, transition: false))
        #expect(Set(bench.take()) == [
            "-S a set-option -g @lifeline #[fg=green]● online#[fg=default]",
            "-S b set-option -g @lifeline #[fg=green]● online#[fg=default]",
        ])
        await pusher.step(nil)  // a rescan with nothing new
        await pusher.step(update(.online, transition: false))  // same text (e.g. only rtt changed)
        #expect(bench.take().isEmpty)
        try bench.server("c")
        await pusher.step(nil)
        #expect(bench.take() == ["-S c set-option -g @lifeline #[fg=green]● online#[fg=default]"])
    }

    @Test func aFailingServerIsTriedThreeTimesADeadSocketNever() async throws {
        let bench = try Bench()
        try bench.server("broken")
        try UnixSocket(path: bench.sockets + "/dead", listen: false).close()
        var pusher = Pusher(sink: bench.sink())
        await pusher.step(update(.online, transition: false))
        for _ in 0..<5 { await pusher.step(nil) }
        let calls = bench.take()
        #expect(calls.filter { $0.hasPrefix("-S broken set-option") }.count == 3, "\(calls)")
        #expect(!calls.contains { $0.contains("dead") }, "\(calls)")
        #expect(calls.count == 3, "\(calls)")
    }

    @Test func alertOncePerOutageNotWhileMuted() async throws {
        let bench = try Bench()
        try bench.server("a")
        var pusher = Pusher(sink: bench.sink())
        await pusher.step(update(.online, transition: false))
        _ = bench.take()

        await pusher.step(update(.offline, outage: 1))
        let alert = "-S a display-message -c /dev/pts/9 -d 5000 Lifeline: offline (eth0) — r"
        #expect(bench.take().filter { !$0.contains("set-option") } == ["-S a list-clients -F #{client_name}", alert])
        await pusher.step(update(.limited, outage: 1))  // same outage
        await pusher.step(update(.online, outage: 1))  // over
        // Each new value was pushed, and nothing else was run.
        #expect(bench.take() == ["-S a set-option -g @lifeline #[fg=colour208]◐ limited#[fg=default]",
                                 "-S a set-option -g @lifeline #[fg=green]● online#[fg=default]"])

        let future = WallClock.micros() + 3_600_000_000
        await pusher.step(update(.offline, outage: 2, mutedUntil: future))
        #expect(bench.take() == ["-S a set-option -g @lifeline #[fg=red]○ offline#[fg=default]"])
        await pusher.step(update(.limited, outage: 2))  // mute over, same outage: not told yet
        #expect(bench.take().contains { $0.contains("display-message") && $0.contains("limited") })
        await pusher.step(update(.limited, outage: 2, transition: false))
        #expect(bench.take().isEmpty)
    }

    /// `auto` alerts unless the notification sink says a server is there: an
    /// absent server or no notification sink at all (nil) leaves tmux as the
    /// only place to say it.
    @Test func autoAlertsUnlessTheNotificationSinkSeesAServerNeverStaysQuiet() async throws {
        let bench = try Bench()
        try bench.server("a")
        var auto = Pusher(sink: bench.sink(TmuxSink.Config(alert: .auto)))
        await auto.step(update(.offline, outage: 1, notificationServer: true))
        #expect(!bench.take().contains { $0.contains("display-message") })

        await auto.step(update(.offline, outage: 2, notificationServer: false))
        #expect(bench.take().contains { $0.contains("display-message") })

        await auto.step(update(.offline, outage: 3, notificationServer: nil))
        #expect(bench.take().contains { $0.contains("display-message") })

        // The server going away within an outage it already has changes nothing:
        // the toast is on screen.
        await auto.step(update(.offline, outage: 4, notificationServer: true))
        await auto.step(update(.offline, outage: 4, transition: false, notificationServer: false))
        #expect(!bench.take().contains { $0.contains("display-message") })

        var never = Pusher(sink: bench.sink(TmuxSink.Config(alert: .never)))
        await never.step(update(.offline, outage: 5, notificationServer: false))
        #expect(!bench.take().contains { $0.contains("display-message") })
    }

    /// `{duration}` moves on without updates, once a minute: the loop is woken
    /// when the minute shown changes, never in between; without `{duration}` in
    /// the template nothing wakes it.
    @Test func durationIsRefreshedWhenTheMinuteShownChanges() async throws {
        let bench = try Bench()
        try bench.server("a")
        let clock = Mutex<Int64>(Self.start + 30_000_000)
        var pusher = Pusher(sink: bench.sink(TmuxSink.Config(format: "{state} {duration}", colors: false, alert: .never)))
        pusher.now = { clock.withLock { $0 } }
        await pusher.step(update(.offline, transition: false))
        #expect(bench.take() == ["-S a set-option -g @lifeline offline <1m"])
        #expect(pusher.refreshDelay() == .seconds(30))

        clock.withLock { $0 = Self.start + 59_000_000 }
        #expect(pusher.refreshDelay() == .seconds(1))
        await pusher.step(nil)  // woken early: same text, nothing pushed
        #expect(bench.take().isEmpty)

        clock.withLock { $0 = Self.start + 60_000_000 }
        await pusher.step(nil)
        #expect(bench.take() == ["-S a set-option -g @lifeline offline 1m"])
        #expect(pusher.refreshDelay() == .seconds(60))

        clock.withLock { $0 = Self.start + 7_530_000_000 }
        await pusher.step(nil)
        #expect(bench.take() == ["-S a set-option -g @lifeline offline 2h 5m"])
        #expect(pusher.refreshDelay() == .seconds(30))

        var plain = Pusher(sink: bench.sink(TmuxSink.Config(format: "{state} {reason}", alert: .never)))
        await plain.step(update(.offline, transition: false))
        #expect(plain.refreshDelay() == nil)
    }

    /// A `since` far in the past or future (a wall clock set wrong) never traps
    /// and never asks for a wake-up more than a minute away.
    @Test func refreshDelayIsBoundedForAnySince() async throws {
        let bench = try Bench()
        var pusher = Pusher(sink: bench.sink(TmuxSink.Config(format: "{duration}", alert: .never)))
        for since in [Int64.min, -1, 0, Self.start, Int64.max] {
            for now in [Int64.min, 0, Self.start, Int64.max] {
                pusher.now = { now }
                pusher.event = StateEvent(state: .online, previous: .unknown, since: since, sequence: 1)
                let delay = try #require(pusher.refreshDelay())
                #expect(delay >= .zero && delay <= .seconds(60), "since \(since) now \(now): \(delay)")
            }
        }
    }

    /// The running sink: a server that appears gets the value at once, a socket
    /// that starts listening a little after it appears gets it too, and while
    /// nothing changes the loop does not turn at all (no polling).
    @Test func newServersAreSeenAtOnceAndNothingRunsWhileNothingChanges() async throws {
        let bench = try Bench()
        try bench.server("a")
        let bus = Bus(clock: ContinuousClock(), debounce: DebounceSettings(down: .zero, up: .zero))
        let mailbox = bus.attachSink(policy: .latest)
        let turns = Mutex(0)
        var sink = bench.sink(TmuxSink.Config(colors: false, alert: .never))
        sink.onTurn = { turns.withLock { $0 += 1 } }
        let running = Task { [sink] in try await sink.run(updates: SinkUpdates(mailbox)) }
        bus.makeMonitorHandle(name: "t").publish(Observation(role: .link, state: .online, interface: "eth0", reason: "up"))

        func waitForCall(_ server: String, within limit: Duration) async -> Duration? {
            let clock = ContinuousClock()
            let start = clock.now
            while clock.now - start < limit {
                if bench.all().contains(where: { $0.hasPrefix("-S \(server) set-option") }) { return clock.now - start }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return nil
        }
        #expect(await waitForCall("a", within: .seconds(5)) != nil)

        // The start settles (the update and the watch's first look may take a
        // turn each); from then on nothing may happen until something changes.
        try await Task.sleep(for: .milliseconds(300))
        let before = turns.withLock { $0 }
        try await Task.sleep(for: .milliseconds(2500))  // a window in which nothing may happen
        #expect(turns.withLock { $0 } == before, "the loop turned while nothing changed")

        try bench.server("b")
        let seen = await waitForCall("b", within: .seconds(2))
        #expect(seen != nil && seen! < .milliseconds(100), "new server served after \(String(describing: seen))")

        // Created, and listening only a moment later, as tmux does.
        let late = try UnixSocket(path: bench.sockets + "/c", listen: false)
        bench.live.append(late)
        try await Task.sleep(for: .milliseconds(30))
        _ = listen(late.fd, 4)
        #expect(await waitForCall("c", within: .seconds(2)) != nil)

        mailbox.close()  // the sink ends with its updates, and stops watching
        _ = await running.result
    }
}

/// The `display-message` fallback waits while alerts are held (sleep, resume
/// grace, inactive session) and comes when the hold lifts during the outage.
struct TmuxHeldAlertTests {
    func update(_ state: ConnectivityState, outage: UInt64?, transition: Bool, held: Bool) -> Update {
        var u = TmuxPusherTests().update(state, outage: outage, transition: transition)
        u.alertsHeld = held
        return u
    }

    @Test func anOutageDuringTheHoldIsAlertedWhenItLifts() async throws {
        let bench = try TmuxPusherTests.Bench()
        try bench.server("a")
        var pusher = Pusher(sink: bench.sink())
        await pusher.step(update(.online, outage: nil, transition: false, held: false))
        await pusher.step(update(.offline, outage: 1, transition: true, held: true))
        // The status line follows the state; no message while held.
        #expect(bench.take() == ["-S a set-option -g @lifeline #[fg=green]● online#[fg=default]",
                                 "-S a set-option -g @lifeline #[fg=red]○ offline#[fg=default]"])
        await pusher.step(update(.offline, outage: 1, transition: false, held: false))
        #expect(bench.take() == ["-S a list-clients -F #{client_name}",
                                 "-S a display-message -c /dev/pts/9 -d 5000 Lifeline: offline (eth0) — r"])
        await pusher.step(update(.offline, outage: 1, transition: false, held: false))
        #expect(bench.take().isEmpty)
    }

    @Test func anOutageThatEndedDuringTheHoldIsNeverAlerted() async throws {
        let bench = try TmuxPusherTests.Bench()
        try bench.server("a")
        var pusher = Pusher(sink: bench.sink())
        await pusher.step(update(.offline, outage: 1, transition: true, held: true))
        await pusher.step(update(.online, outage: 1, transition: true, held: true))
        await pusher.step(update(.online, outage: 1, transition: false, held: false))
        #expect(!bench.take().contains { $0.contains("display-message") })
    }
}

/// The runner against real programs: what a tmux child is given, and that one
/// past its time limit is killed and reaped.
struct TmuxCommandRunnerTests {
    @Test func theChildGetsOnlyItsOwnDescriptorsAndAnEmptyInput() async throws {
        // A descriptor of the daemon's without close-on-exec must stay with the daemon.
        let leaky = open("/dev/null", O_RDONLY)
        #expect(leaky > 2)
        defer { close(leaky) }
        let outcome = await CommandRunner().run("sh", ["-c", "ls /proc/$$/fd; readlink /proc/$$/fd/0; head -c 10"])
        #expect(outcome == .ok(output: "0\n1\n2\n/dev/null\n"))
    }

    @Test func aFailureNamesTheExitAndTheFirstLineOfErrors() async {
        let outcome = await CommandRunner().run("sh", ["-c", "echo 'no server running' >&2; echo more >&2; exit 3"])
        guard case .failed(let why) = outcome else { Issue.record("\(outcome)"); return }
        #expect(why.contains("3") && why.hasSuffix("no server running"), "\(why)")
        #expect(await CommandRunner().run("lifeline-no-such-program-\(UUID().uuidString.prefix(8))", []) == .notFound)
    }

    @Test func aChildPastItsLimitIsKilledAndReaped() async throws {
        let pidFile = "/tmp/lifeline-runner-\(UUID().uuidString.prefix(8))"
        defer { unlink(pidFile) }
        let started = ContinuousClock.now
        let outcome = await CommandRunner(timeout: .milliseconds(300)).run("sh", ["-c", "echo $$ > \(pidFile); exec sleep 30"])
        #expect(outcome == .timedOut)
        #expect(ContinuousClock.now - started < .seconds(5))
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Reaped: not even a zombie answers.
        #expect(kill(pid, 0) != 0 && errno == ESRCH)
    }
}
