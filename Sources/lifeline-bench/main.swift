// lifeline-bench: measurements for `make bench` (never timed unit tests).
// Usage: lifeline-bench <benchmark> [args]; `lifeline-bench` alone lists them.
import Glibc

let benchmarks: [(name: String, summary: String, run: ([String]) async throws -> Void)] = [
    ("throughput", "observations/s through decision + debounce + fan-out to 4 sinks", Throughput.run),
    ("dbus", "publish -> StateChanged at a subscriber, Check()/GetStatus() round trips (needs a session bus)", DBusBench.run),
    ("call", "GetStatus()/Check() round trips to a running daemon (needs its session bus)", CallBench.run),
]

let args = Array(CommandLine.arguments.dropFirst())
guard let name = args.first, let bench = benchmarks.first(where: { $0.name == name }) else {
    print("usage: lifeline-bench <benchmark>")
    for b in benchmarks { print("  \(b.name)  \(b.summary)") }
    exit(args.isEmpty ? 0 : 2)
}
try await bench.run(Array(args.dropFirst()))
