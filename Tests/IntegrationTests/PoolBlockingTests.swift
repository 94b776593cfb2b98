import Glibc
import LifelineConfig
import LifelineCore
import Testing
@testable import LifelineDaemon
@testable import LifelineExecutor

/// The daemon's pool has two threads on a two-core machine; work that blocks
/// (a config child and its reaping) must hold neither, or the debounce timer,
/// the sinks and the watches wait behind it.
@Suite struct PoolBlockingTests {
    /// Two reloads whose parser hangs in a child, on a pool of two threads: a
    /// deadline due meanwhile (as the debounce timer's) still fires on time.
    @Test func twoReloadsBlockedInChildrenDelayNoDeadline() async throws {
        let executor = try EpollExecutor(threads: 2, name: "qe-reload-\(getpid())")
        defer { executor.stop() }
        // A parser that takes 3 s and answers nothing.
        let parser = TOMLParser.isolated(executable: "/bin/sh", arguments: ["-c", "sleep 3"])
        let clock = ContinuousClock()
        let started = clock.now
        let late = await withTaskGroup(of: Duration?.self) { group in
            for _ in 0..<2 {
                group.addTask(executorPreference: executor) {
                    _ = try? await PluginHost.load { () throws(ConfigError) -> DaemonConfig in
                        try ConfigLoader.load(text: "[debounce]\ndown = \"1s\"\n", file: "slow.toml", parser: parser)
                    }
                    return nil
                }
            }
            // Due while both reloads wait for their children.
            let deadline = started + .milliseconds(300)
            group.addTask(executorPreference: executor) {
                try? await Task.sleep(until: deadline, clock: clock)
                return clock.now - deadline
            }
            var late: Duration?
            for await result in group { if let result { late = result } }
            return late
        }
        let lateness = try #require(late)
        // Blocked behind the reloads it would fire 3 s late; a loaded machine may add a little, not that.
        #expect(lateness < .seconds(2), "the deadline fired \(lateness) late")
        #expect(clock.now - started >= .seconds(3), "the reloads did not block in their children")
    }
}
