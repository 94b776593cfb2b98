import Foundation
import Testing

/// The notification server crashes, comes back and hangs in the middle of an
/// outage (dunst under Xvfb on a private bus): what the user finds on screen
/// afterwards is the current state, once, and nothing stale after recovery.
@Suite(.serialized, .requires(.tools(Desktop.tools + ["tail", "gdbus"]))) struct FaultNotifyTests {
    static let name = "org.lifeline.Lifeline1"
    static let path = "/org/lifeline/Lifeline1"

    struct Lab {
        let desktop: Desktop
        let fixture: DaemonFixture
        let net: ScriptedNetwork
        let calls: BackgroundProcess

        var notifies: [NotificationCalls.Notify] { NotificationCalls(calls.output).notifies }

        /// Says `state` and waits (bounded) until the daemon has logged it.
        func say(_ state: String, reason: String = "") async throws {
            let before = fixture.loggedStates().count
            try net.say(state, interface: state == "offline" ? "" : "eth0", reason: reason)
            await Harness.waitUntil("\(state) logged") { fixture.loggedStates().count == before + 1 }
        }

        /// The D-Bus service's answer to GetStatus from gdbus, within two seconds.
        func status() throws -> (status: Int32, stdout: String, stderr: String) {
            try Harness.run(["gdbus", "call", "--session", "--timeout", "2", "--dest", FaultNotifyTests.name,
                             "--object-path", FaultNotifyTests.path, "--method", "\(FaultNotifyTests.name).GetStatus"],
                            environment: desktop.environment)
        }
    }

    /// dunst, a Notify watcher, and a daemon with no debounce that is online.
    func lab() async throws -> Lab {
        let desktop = try Desktop()
        try await desktop.startNotificationServer()
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment)
        let net = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(net.config(debounceMs: 0, sinks: """
            [[sink]]
            kind = "libnotify"
            [[sink]]
            kind = "log"
            [[sink]]
            kind = "dbus"
            """))
        let calls = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        await Desktop.waitUntilMonitoring(calls)
        try fixture.start()
        await Harness.waitUntil("serving") { fixture.daemonLog.contains("serving \(Self.name)") }
        let lab = Lab(desktop: desktop, fixture: fixture, net: net, calls: calls)
        try await lab.say("online")
        return lab
    }

    /// After recovery the "Back online" toast replaces the outage toast and expires
    /// (5 s): the screen ends up empty, with no "Offline" left behind.
    func expectRecoveryLeavesNothing(_ lab: Lab, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await lab.say("online")
        await Harness.waitUntil("Back online", sourceLocation: sourceLocation) { lab.notifies.last?.summary == "Back online" }
        let back = try #require(lab.notifies.last, sourceLocation: sourceLocation)
        #expect(back.replacesID != 0, "Back online is a new toast beside the outage's: \(lab.notifies)", sourceLocation: sourceLocation)
        await Harness.waitUntil(timeout: .seconds(10), "an empty screen after Back online expires", sourceLocation: sourceLocation) {
            lab.desktop.displayedCount() == 0
        }
    }

    @Test func aCrashedServerComesBackShowingTheCurrentStateOnce() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try await lab.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.notifies.count == 1 && lab.desktop.displayedCount() == 1 }

        lab.desktop.killNotificationServer()
        await Harness.waitUntil("the daemon saw the server go") { lab.fixture.daemonLog.contains("notification server left") }
        // The outage changes while no server is there to show it.
        try await lab.say("limited", reason: "upstream silent")
        let before = lab.notifies.count
        try await lab.desktop.startNotificationServer()
        await Harness.waitUntil("the outage shown again") { lab.notifies.count > before && lab.desktop.displayedCount() == 1 }
        try await Task.sleep(for: .milliseconds(500))  // not a readiness wait: no second toast may follow
        let again = Array(lab.notifies.dropFirst(before))
        #expect(again.count == 1, "\(again)")
        #expect(again.first?.replacesID == 0)
        #expect(again.first?.summary == "Connected, but no internet", "the state before the crash came back: \(again)")
        #expect(again.first?.body.contains("Upstream silent.") == true, "\(again)")
        #expect(lab.desktop.displayedCount() == 1)

        try await expectRecoveryLeavesNothing(lab)
        #expect(await lab.fixture.stop() == 0)
    }

    @Test func aServerHungAndKilledMidOutageComesBackOnceAndTheServiceKeepsAnswering() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try await lab.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.notifies.count == 1 && lab.desktop.displayedCount() == 1 }

        // Hung: it keeps its name, takes the next Notify and answers nothing.
        lab.desktop.pauseNotificationServer()
        try await lab.say("limited", reason: "upstream silent")
        await Harness.waitUntil("the update sent to the hung server") { lab.notifies.count == 2 }
        try await lab.say("portal", reason: "login page")
        for _ in 0..<5 {
            let status = try lab.status()
            #expect(status.status == 0, "GetStatus while the server hangs: \(status.stderr)")
            #expect(status.stdout.contains("'state': <'portal'>"), "\(status.stdout)")
        }
        // It dies hung; another one starts.
        lab.desktop.killNotificationServer()
        await Harness.waitUntil("the daemon saw the server go") { lab.fixture.daemonLog.contains("notification server left") }
        let before = lab.notifies.count
        try await lab.desktop.startNotificationServer()
        await Harness.waitUntil("the outage shown again") { lab.notifies.count > before && lab.desktop.displayedCount() == 1 }
        try await Task.sleep(for: .milliseconds(500))  // not a readiness wait: no second toast may follow
        let again = Array(lab.notifies.dropFirst(before))
        #expect(again.count == 1, "\(again)")
        #expect(again.first?.replacesID == 0)
        #expect(again.first?.summary == "Sign in to the network", "\(again)")
        #expect(lab.desktop.displayedCount() == 1)

        try await expectRecoveryLeavesNothing(lab)
        #expect(lab.fixture.process?.isRunning == true)
        #expect(await lab.fixture.stop() == 0)
    }

    @Test func recoveryWhileTheServerHangsLeavesNoOutageToastWhenItWakes() async throws {
        let lab = try await lab()
        defer { lab.fixture.stopNow() }
        try await lab.say("offline", reason: "cable pulled")
        await Harness.waitUntil("toast") { lab.notifies.count == 1 && lab.desktop.displayedCount() == 1 }
        lab.desktop.pauseNotificationServer()
        try await lab.say("limited", reason: "upstream silent")
        try await lab.say("online")
        #expect(try lab.status().stdout.contains("'state': <'online'>"))
        lab.desktop.resumeNotificationServer()
        await Harness.waitUntil("Back online") { lab.notifies.last?.summary == "Back online" }
        #expect(lab.notifies.filter { $0.replacesID == 0 }.count == 1, "one toast for the outage: \(lab.notifies)")
        await Harness.waitUntil(timeout: .seconds(10), "an empty screen after Back online expires") {
            lab.desktop.displayedCount() == 0
        }
        #expect(await lab.fixture.stop() == 0)
    }
}
