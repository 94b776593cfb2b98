import Foundation
import Testing

/// tmux servers come and go while the daemon runs: killed cleanly, killed with
/// SIGKILL (a socket left behind), stopped (SIGSTOP), started anew. Each new
/// server shows the current state without a daemon restart; the dead ones cost
/// no warning and leave no child behind.
@Suite(.serialized, .requires(.tools(["tmux", "tail"]))) struct FaultTmuxTests {
    struct Lab {
        let tmux: TmuxLab
        let fixture: DaemonFixture
        let net: ScriptedNetwork

        func say(_ state: String) async throws {
            let before = fixture.loggedStates().count
            try net.say(state, interface: state == "offline" ? "" : "eth0", reason: "step \(before)")
            await Harness.waitUntil("\(state) logged") { fixture.loggedStates().count == before + 1 }
        }

        /// Waits (bounded) until every server in `names` shows `state`.
        func expectShown(_ state: String, on names: [String], sourceLocation: SourceLocation = #_sourceLocation) async {
            await Harness.waitUntil("\(state) on \(names)", sourceLocation: sourceLocation) {
                names.allSatisfy { (try? tmux.option($0)) == state }
            }
        }

        /// The server's own process id.
        func pid(_ name: String) throws -> Int32 {
            let r = try tmux.tmux(["-L", name, "display-message", "-p", "#{pid}"])
            guard let pid = Int32(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw TmuxLab.Failure("no pid for \(name): \(r.stderr)")
            }
            return pid
        }

        /// Kills a server as a crash would: SIGKILL, its socket left in the folder.
        func crash(_ name: String) async throws {
            let pid = try pid(name)
            kill(pid, SIGKILL)
            await Harness.waitUntil("server \(name) dead") { kill(pid, 0) != 0 }
        }

        /// The daemon's children that are not its exec monitor (`tail`); one that
        /// ended between the listing and the look ("?") is no longer there. A push
        /// has a child for up to its 2 s limit, so a leak is one that stays.
        var strayChildren: [String] {
            (fixture.gauge?.children ?? []).filter { $0.name != "tail" && $0.name != "?" }.map { "\($0.pid) \($0.name) \($0.state)" }
        }

        /// Every warning or error the daemon logged, and its notices about tmux.
        var complaints: [String] {
            fixture.daemonLog.split(separator: "\n").map(String.init).filter { line in
                // "2026-11-23T20:55:30+0000 warning lifeline: …": the level is the second word.
                let level = line.split(separator: " ").dropFirst().first ?? ""
                return ["warning", "error", "critical"].contains(level)
                    || (level == "notice" && (line.contains("tmux") || line.contains(tmux.socketFolder)))
            }
        }
    }

    func lab() async throws -> Lab {
        let tmux = try TmuxLab()
        let fixture = try DaemonFixture(extraEnvironment: tmux.daemonEnvironment)
        let net = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(net.config(debounceMs: 0, sinks: """
            [[sink]]
            kind = "tmux"
            format = "{state}"
            colors = false
            alert = "never"
            [[sink]]
            kind = "log"
            """))
        return Lab(tmux: tmux, fixture: fixture, net: net)
    }

    @Test func serversKilledAndStartedWhileTheDaemonRunsGetTheCurrentStateQuietly() async throws {
        let lab = try await lab()
        defer { lab.tmux.killAll() }
        defer { lab.fixture.stopNow() }
        try lab.tmux.startServer("a")
        try lab.tmux.startServer("b")
        try lab.fixture.start()
        try await lab.say("online")
        await lab.expectShown("online", on: ["a", "b"])

        // One crashes (its socket stays), one is killed cleanly; the state changes meanwhile.
        try await lab.crash("a")
        try await lab.tmux.killServer("b")
        try await lab.say("offline")
        // A new server, and the crashed one started again on its old socket path.
        try lab.tmux.startServer("c")
        try lab.tmux.startServer("a")
        await lab.expectShown("offline", on: ["a", "c"])

        // Churn: servers started and crashed while the state keeps changing.
        let states = ["limited", "portal", "offline", "online", "limited", "online"]
        for (n, state) in states.enumerated() {
            try lab.tmux.startServer("churn\(n)")
            try await lab.say(state)
            await lab.expectShown(state, on: ["a", "c", "churn\(n)"])
            try await lab.crash("churn\(n)")
        }
        // Every push has finished (each has a 2 s limit): no tmux client left running or unreaped.
        await Harness.waitUntil(timeout: .seconds(5), "no stray children") { lab.strayChildren.isEmpty }
        #expect(lab.fixture.gauge?.children.contains { $0.name == "tail" } == true, "the daemon's children are not visible")
        #expect(lab.complaints.isEmpty, "\(lab.complaints)")
        #expect(lab.fixture.process?.isRunning == true)
        #expect(await lab.fixture.stop() == 0)
    }

    @Test func aStoppedServerHoldsUpNeitherTheOthersNorItsChild() async throws {
        let lab = try await lab()
        defer { lab.tmux.killAll() }
        defer { lab.fixture.stopNow() }
        try lab.tmux.startServer("hung")
        try lab.tmux.startServer("fine")
        try lab.fixture.start()
        try await lab.say("online")
        await lab.expectShown("online", on: ["hung", "fine"])

        let hung = try lab.pid("hung")
        kill(hung, SIGSTOP)
        defer { kill(hung, SIGKILL) }
        try await lab.say("offline")
        await lab.expectShown("offline", on: ["fine"])
        try await lab.say("limited")
        // The next change waits for the stopped server's 2 s limit at most.
        await lab.expectShown("limited", on: ["fine"])
        // The stopped server's tmux clients are killed at their limit and reaped.
        await Harness.waitUntil(timeout: .seconds(8), "no stray children") { lab.strayChildren.isEmpty }

        // It dies stopped; a new server takes its place and gets the current state.
        kill(hung, SIGKILL)
        await Harness.waitUntil("stopped server dead") { kill(hung, 0) != 0 }
        try lab.tmux.startServer("next")
        await lab.expectShown("limited", on: ["next", "fine"])
        await Harness.waitUntil(timeout: .seconds(5), "no stray children") { lab.strayChildren.isEmpty }
        #expect(lab.complaints.isEmpty, "\(lab.complaints)")
        #expect(await lab.fixture.stop() == 0)
    }
}
