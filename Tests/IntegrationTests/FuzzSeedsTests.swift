import Foundation
import Testing

/// Every libFuzzer target's plain build replays the committed seeds through the
/// same checks the fuzzer runs (`make fuzz` does the fuzzing). So a change that
/// breaks a fuzz target's build, or that a seed would crash, fails here, in the
/// suite everyone runs, and not only in CI's fuzzing step.
@Suite struct FuzzSeedsTests {
    /// One seed folder per target: `fuzz/corpus/<target>`, replayed by `lifeline-fuzz-<target>`.
    static let targets = ((try? FileManager.default.contentsOfDirectory(
        atPath: PackagingTests.repo.appendingPathComponent("fuzz/corpus").path)) ?? []).sorted()

    @Test func everyFuzzTargetHasSeeds() {
        #expect(Set(Self.targets) == ["config", "dbus", "input", "netlink"], "fuzz/corpus holds \(Self.targets)")
    }

    @Test(arguments: targets) func seedsReplayCleanly(target: String) throws {
        let folder = URL(fileURLWithPath: Harness.binary).deletingLastPathComponent()
        let replayer = folder.appendingPathComponent("lifeline-fuzz-\(target)").path
        #expect(FileManager.default.isExecutableFile(atPath: replayer), "lifeline-fuzz-\(target) was not built beside \(Harness.binary)")
        let corpus = PackagingTests.repo.appendingPathComponent("fuzz/corpus/\(target)")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
            .map { corpus.appendingPathComponent($0).path }
        #expect(seeds.count >= 3, "fuzz/corpus/\(target) holds \(seeds.count) seeds")
        let run = try Harness.run([replayer] + seeds)
        #expect(run.status == 0, "lifeline-fuzz-\(target) exited \(run.status): \(run.stderr)")
        let replayed = run.stdout.split(separator: "\n").filter { $0.hasSuffix(": ok") }
        #expect(replayed.count == seeds.count, "replayed \(replayed.count) of \(seeds.count) seeds:\n\(run.stdout)")
    }
}
