import Foundation
import LifelineTestKit
import Testing

/// Started by a parent that ignores SIGCHLD (some supervisors and job runners
/// do, and exec passes it on), every Lifeline program still sees its children
/// end: with SIGCHLD ignored the kernel would reap them itself and no wait
/// would ever see an exit.
@Suite struct InheritedSIGCHLDTests {
    /// `python3 -c … PROGRAM ARG…`: PROGRAM runs with SIGCHLD ignored.
    static let ignoringSIGCHLD = [
        "python3", "-c",
        "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])",
    ]

    @Test(.requires(.tools(JobsTests.tools + ["python3"]))) func runReturnsItsCommandsStatusPromptly() async throws {
        let lab = try JobsTests.Lab()
        try await lab.start("online", reason: "up")
        let run = try BackgroundProcess(Self.ignoringSIGCHLD + [Harness.binary, "run", "--", "sh", "-c", "exit 7"],
                                        environment: lab.daemon.environment, output: lab.daemon.root.appendingPathComponent("run.txt"))
        defer { run.stop() }
        #expect(await JobsTests.waitForExit(run, timeout: .seconds(5)) == 7, "\(run.output)")
        #expect(await lab.daemon.stop() == 0)
    }

    @Test(.requires(.tools(["python3"]))) func configCheckPassesAValidFile() throws {
        let fixture = try DaemonFixture()
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"log\""))
        let r = try Harness.run(Self.ignoringSIGCHLD + [Harness.binary, "config", "check"], environment: fixture.environment)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }

    @Test(.requires(.tools(["python3", "tail"]))) func theDaemonStartsAndItsExecMonitorIsHeard() async throws {
        let fixture = try DaemonFixture()
        let network = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(network.config(debounceMs: 0, sinks: "[[sink]]\nkind = \"log\""))
        try network.say("online", interface: "eth0", reason: "up")
        fixture.commandPrefix = Self.ignoringSIGCHLD
        try fixture.start()
        await Harness.waitUntil("online (log: \(fixture.daemonLog))") { fixture.loggedStates() == ["online"] }
        #expect(await fixture.stop() == 0, "\(fixture.daemonLog)")
    }
}
