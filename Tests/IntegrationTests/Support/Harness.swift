import Foundation
import LifelineTestKit
import Testing

/// Shared pieces for tests that run the real `lifeline` binary against real
/// components. Waits are bounded polls, never bare sleeps.
enum Harness {
    /// The `lifeline` executable built beside the test bundle.
    static var binary: String {
        if let explicit = ProcessInfo.processInfo.environment["LIFELINE_BIN"] { return explicit }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = bundle.deletingLastPathComponent()
        // swift-testing runs from `.build/<triple>/debug/lifelinePackageTests.xctest`.
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("lifeline").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/lifeline"
    }

    /// True when CI demands that integration tests run rather than skip.
    static var integrationRequired: Bool {
        ProcessInfo.processInfo.environment["LIFELINE_REQUIRE_INTEGRATION"] == "1"
    }

    /// For a requirement known only inside the test (one argument of several):
    /// missing, it ends the test as skipped with the reason, or, under
    /// `LIFELINE_REQUIRE_INTEGRATION=1`, as failed.
    static func require(_ requirement: Requirement, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try require(missing: requirement.missing(), sourceLocation: sourceLocation)
    }

    /// The same for a reason worked out in the test: nil when nothing is missing.
    static func require(missing: String?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let missing else { return }
        if integrationRequired {
            Issue.record("integration test cannot run: \(missing) (LIFELINE_REQUIRE_INTEGRATION=1)", sourceLocation: sourceLocation)
            throw RequirementMissing(description: missing)
        }
        try Test.cancel(Comment(rawValue: missing), sourceLocation: sourceLocation)
    }

    struct RequirementMissing: Error, CustomStringConvertible {
        var description: String
    }

    /// What a test needs from the machine: `missing()` says what is absent, or nil.
    struct Requirement: Sendable {
        let missing: @Sendable () -> String?

        init(missing: @escaping @Sendable () -> String?) { self.missing = missing }

        static let root = Requirement { getuid() == 0 ? nil : "needs root" }

        static func tools(_ tools: [String]) -> Requirement {
            Requirement {
                let absent = tools.filter { Harness.which($0) == nil }
                return absent.isEmpty ? nil : "missing \(absent.joined(separator: ", "))"
            }
        }

        static func rootAnd(_ tools: [String]) -> Requirement { all(.root, .tools(tools)) }

        /// Every one of `requirements`; the first one missing is the reason.
        static func all(_ requirements: Requirement...) -> Requirement { all(requirements) }

        static func all(_ requirements: [Requirement]) -> Requirement {
            Requirement { requirements.lazy.compactMap { $0.missing() }.first }
        }
    }

    static func which(_ tool: String) -> String? { Spawned.which(tool) }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes.
    @discardableResult
    static func waitUntil(
        timeout: Duration = .seconds(10), _ what: String = "condition",
        sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool
    ) async rethrows -> Bool {
        let final = try await eventually(timeout: timeout, every: .milliseconds(10), condition)
        if !final { Issue.record("timed out after \(timeout) waiting for \(what)", sourceLocation: sourceLocation) }
        return final
    }

    /// Runs a command to completion and returns its exit status and output, as text.
    @discardableResult
    static func run(_ argv: [String], environment: [String: String]? = nil, stdin: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try Spawned.run(argv, environment: environment, stdin: stdin.map { .bytes(Array($0.utf8)) } ?? .null)
        return (r.status, String(decoding: r.stdout, as: UTF8.self), String(decoding: r.stderr, as: UTF8.self))
    }
}

/// A private set of XDG folders and a `lifeline daemon` running with them.
final class DaemonFixture: @unchecked Sendable {
    let root: URL
    let environment: [String: String]
    private(set) var process: Spawned?
    private let logURL: URL
    /// Runs the daemon through a wrapper that execs it, e.g.
    /// `["ip", "netns", "exec", NS]` to put it in a network namespace.
    var commandPrefix: [String] = []

    init(extraEnvironment: [String: String] = [:]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-test-\(UUID().uuidString.prefix(8))")
        for sub in ["config/lifeline", "state", "run"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        env["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        env["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
        env["LIFELINE_LOG_LEVEL"] = env["LIFELINE_LOG_LEVEL"] ?? "debug"
        // The default monitors include the probe (nmcheck.gnome.org). Tests never
        // reach outside the machine: its requests go to a closed loopback port
        // instead (libcurl takes proxies from the environment and then resolves nothing).
        for name in ["http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY"] {
            env[name] = "http://127.0.0.1:9"
        }
        env["no_proxy"] = nil
        env["NO_PROXY"] = nil
        // A test daemon never joins the developer's real session bus (the default
        // config has a `dbus` sink and one name per bus): tests that want D-Bus
        // pass a private bus (`PrivateBus`) in `extraEnvironment`.
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + root.appendingPathComponent("no-session-bus").path
        // Nor the machine's system bus: its NetworkManager would speak for the test's
        // network, and the default `logind` monitor would take a real inhibitor lock.
        // Tests that want one pass a private stand-in.
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + root.appendingPathComponent("no-system-bus").path
        for (k, v) in extraEnvironment { env[k] = v }
        environment = env
        logURL = root.appendingPathComponent("daemon.log")
    }

    var configPath: String { root.appendingPathComponent("config/lifeline/config.toml").path }
    var eventLogPath: String { root.appendingPathComponent("state/lifeline/events.jsonl").path }
    var stateFilePath: String { root.appendingPathComponent("run/lifeline/state.json").path }

    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    func writeConfig(_ toml: String) throws {
        try toml.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Writes an executable script (mode 0700) and returns its path.
    func writeScript(_ name: String, _ body: String) throws -> String {
        let p = path(name)
        try body.write(toFile: p, atomically: true, encoding: .utf8)
        chmod(p, 0o700)
        return p
    }

    func start(arguments: [String] = ["daemon"]) throws {
        process = try Spawned(commandPrefix + [Harness.binary] + arguments, environment: environment,
                              stdout: .file(logURL.path), stderr: .stdout)
    }

    /// What the daemon wrote to stdout and stderr so far.
    var daemonLog: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Sends `signal` and waits (bounded) for the daemon to exit; returns its
    /// status, or nil when it had to be killed.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async -> Int32? {
        guard let p = process else { return nil }
        p.signal(signal)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while p.isRunning, clock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        if let status = p.exitStatus { return status }
        p.kill()
        return nil
    }

    /// Runs `lifeline ARGS` with this fixture's environment.
    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try Harness.run([Harness.binary] + arguments, environment: environment)
    }

    /// The event log's transitions, parsed (its sleep, wake and stop lines are `loggedMarks`).
    func loggedEvents() -> [[String: Any]] { loggedLines().filter { $0["mark"] == nil } }

    /// The event log's marks: `{"mark":"sleep","since":…}` and the like.
    func loggedMarks() -> [[String: Any]] { loggedLines().filter { $0["mark"] != nil } }

    private func loggedLines() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: eventLogPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    func loggedStates() -> [String] { loggedEvents().compactMap { $0["state"] as? String } }

    /// The runtime state file, parsed; nil while there is none.
    func stateJSON() -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: stateFilePath) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// Whether the event log and the state file show the same newest transition.
    /// Two writers, each with its own mailbox and schedule, keep them, so either
    /// may lag: a test that waited on one and then reads the other waits for both.
    /// A daemon without a `log` sink writes no log, and then only the state file counts.
    func filesAgree() -> Bool {
        guard let logged = loggedEvents().last?["sequence"] as? Int else { return true }
        return stateJSON()?["sequence"] as? Int == logged
    }

    /// Waits until the event log holds exactly `states` and the state file shows the last of them.
    @discardableResult
    func waitForLogged(_ states: [String], timeout: Duration = .seconds(10),
                       sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await Harness.waitUntil(timeout: timeout, "\(states) logged and in the state file (log: \(loggedStates()), "
                                + "state file: \(stateJSON()?["state"] ?? "none"))", sourceLocation: sourceLocation) {
            loggedStates() == states && filesAgree()
        }
    }

    deinit {
        process?.kill()
        try? FileManager.default.removeItem(at: root)
    }
}
