import Glibc

// `lifeline-bench <area>`: micro-benchmarks that need the daemon's insides.
// Each area prints its own lines; bench/<area>.sh runs it and records the numbers.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "dbus":
    await DBusBench.run(Array(arguments.dropFirst()))
default:
    print("usage: lifeline-bench dbus [--count N]")
    exit(2)
}
