// lifeline-bench: measurements for `make bench` (never timed unit tests).
// Usage: lifeline-bench <benchmark> [args]; `lifeline-bench` alone lists them.
import Glibc
import LifelineExecutor

let benchmarks: [(name: String, summary: String, run: ([String]) async throws -> Void)] = [
    ("throughput", "observations/s through decision + debounce + fan-out to 4 sinks", Throughput.run),
    ("dbus", "publish -> StateChanged at a subscriber, Check()/GetStatus() round trips (needs a session bus)", DBusBench.run),
    ("call", "GetStatus()/Check() round trips to a running daemon (needs its session bus)", CallBench.run),
    ("sockdiag", "one quality sample: sock_diag read, filter and estimate (CPU, switches)", SockDiagBench.run),
]

let args = Array(CommandLine.arguments.dropFirst())
guard let name = args.first, let bench = benchmarks.first(where: { $0.name == name }) else {
    print("usage: lifeline-bench <benchmark>")
    for b in benchmarks { print("  \(b.name)  \(b.summary)") }
    exit(args.isEmpty ? 0 : 2)
}
// The bus runs on the daemon's executor, as in the daemon, installed the same
// way: before any task exists. LIFELINE_BENCH_EXECUTOR=swift keeps Swift's own
// (libdispatch's pool) to compare.
let executor = getenv("LIFELINE_BENCH_EXECUTOR").map { String(cString: $0) } ?? "quiet"
if name == "throughput", executor != "swift" {
    guard EpollExecutor.install() != nil else {
        print("lifeline-bench: the daemon's executor could not start its threads")
        exit(1)
    }
    print("executor: the daemon's (EpollExecutor, \(EpollExecutor.defaultThreads) threads)")
} else if name == "throughput" {
    print("executor: Swift's default (libdispatch)")
}
// The main thread only waits, as the daemon's does: an async main would run the
// benchmark's first steps on the main actor instead.
Task.detached {
    do {
        try await bench.run(Array(args.dropFirst()))
        exit(0)
    } catch {
        print("lifeline-bench \(name): \(error)")
        exit(1)
    }
}
while true { pause() }
