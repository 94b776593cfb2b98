// swift-tools-version:6.2
import PackageDescription

// The targets, from the bottom up; every dependency points to a target above it
// in this file. docs/design.md draws the same graph.

/// Every Swift target is compiled with the same strict settings.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

/// Link flags for one binary, given by `make release` in an environment variable
/// (space-separated swiftc arguments): SwiftPM's command line cannot give them to
/// one product alone, and `-Xswiftc` would change every module's compile command.
/// A plain `swift build` sets none, and its binaries work as they are.
func linkFlags(from variable: String) -> [LinkerSetting] {
    let flags = (Context.environment[variable] ?? "").split(separator: " ").map(String.init)
    return flags.isEmpty ? [] : [.unsafeFlags(flags)]
}

func library(_ name: String, _ dependencies: [Target.Dependency], path: String? = nil) -> Target {
    .target(name: name, dependencies: dependencies, path: path, swiftSettings: strict)
}

/// A monitor plugin: one folder `Plugins/Monitors/<Name>`, registered in the daemon's `Registry`.
func monitor(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    library(name, dependencies, path: "Plugins/Monitors/\(name)")
}

/// A sink plugin: one folder `Plugins/Sinks/<Name>`, registered in the daemon's `Registry`.
func sink(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    library(name, dependencies, path: "Plugins/Sinks/\(name)")
}

func tests(_ name: String, _ dependencies: [Target.Dependency], exclude: [String] = []) -> Target {
    .testTarget(name: name, dependencies: dependencies, exclude: exclude, swiftSettings: strict)
}

let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let clocks = Target.Dependency.product(name: "Clocks", package: "swift-clocks")
let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

/// Every plugin, each named once; `targets` lists them after the libraries they build on,
/// and the daemon's registry and `PluginTests` depend on all of them.
let plugins: [Target] = [
    monitor("ExecMonitor", ["LifelineCore", "LifelinePlatform", "LifelineFormats", "CProcess"]),
    monitor("NetlinkMonitor", ["LifelineCore", "LifelinePlatform", "LifelineNet", "CNetlink", logging]),
    monitor("ProbeMonitor", ["LifelineCore", "LifelineNet", "LifelineFormats", logging]),
    monitor("NetworkManagerMonitor", ["LifelineCore", "LifelineDBus", "LifelineGLib", "LifelineNet", logging]),
    monitor("LogindMonitor", ["LifelineCore", "LifelineDBus", "LifelineGLib"]),
    sink("LogSink", ["LifelineCore", "LifelinePlatform", "LifelineFormats"]),
    sink("DBusSink", ["LifelineCore"]),
    sink("NotifySink", ["LifelineCore", "LifelinePlatform", "CNotify", "LifelineGLib"]),
    sink("TmuxSink", ["LifelineCore", "LifelinePlatform", "LifelineFormats"]),
    sink("PrometheusSink", ["LifelineCore", "LifelinePlatform", logging, .product(name: "Prometheus", package: "swift-prometheus")]),
    sink("ExecSink", ["LifelineCore", "LifelinePlatform", "LifelineFormats", "CProcess", logging]),
    sink("TraySink", ["LifelineCore", "LifelinePlatform", "LifelineFormats", "LifelineReport", "LifelineDBus", "LifelineGLib", "CDbusmenu", "CGLib"]),
]
let pluginDependencies = plugins.map { Target.Dependency.target(name: $0.name) }

let package = Package(
    name: "lifeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lifeline", targets: ["lifeline"]),
        .executable(name: "lifeline-cli", targets: ["lifeline-cli"]),
        .executable(name: "lifeline-daemon", targets: ["lifeline-daemon"]),
        .library(name: "LifelineCore", targets: ["LifelineCore"]),
        .library(name: "LifelineTestKit", targets: ["LifelineTestKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // The Prometheus text exposition format for the `prometheus` sink.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C headers and libraries, one shim each. Headers only (their functions live in glibc):
        // rtnetlink for the network primitives; pidfd_open, close_range and posix_spawn
        // for children; epoll, eventfd and timerfd for the executor and for waits; glibc's
        // socket constants under names of our own (Sources/CSocket says why); gettext.
        .systemLibrary(name: "CNetlink", path: "Sources/CNetlink"),
        .systemLibrary(name: "CProcess", path: "Sources/CProcess"),
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        .systemLibrary(name: "CSocket", path: "Sources/CSocket"),
        .systemLibrary(name: "CIntl", path: "Sources/CIntl"),
        // Libraries through pkg-config, which gives SwiftPM the -l flags.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
        // The tray icon's menu (com.canonical.dbusmenu); GIO comes through CGLib's flags.
        .systemLibrary(name: "CDbusmenu", pkgConfig: "dbusmenu-glib-0.4", providers: [.apt(["libdbusmenu-glib-dev"])]),
        // libcurl's header (libcurl4-gnutls-dev) and the loader that opens the library when a check first needs it.
        .target(name: "CCurl"),

        // Platform glue: one way to spawn a child, files, threads, descriptor waits, paths, gettext.
        library("LifelinePlatform", ["CProcess", "CEpoll", "CSocket", "CIntl"]),
        // The domain: states and observations, the decision, the debouncer, outages,
        // alert holds, the bus and its mailboxes, the plugin contract, how a state reads.
        library("LifelineCore", ["LifelinePlatform", logging]),
        // The daemon's executor: one epoll set for every task, sleep and descriptor wait.
        library("LifelineExecutor", ["LifelinePlatform", "CEpoll"]),
        // What crosses a process boundary through files and stdout: the event JSON,
        // the state file, the event log, the status and watch formats. The front
        // binary and the CLI read these without linking any plugin.
        library("LifelineFormats", ["LifelineCore", "LifelinePlatform", "CProcess"]),
        // `history --report`, `--csv` and `--json`: the log read into a timeline, and the
        // HTML page made of it. Plain Swift: the tray writes the page in the daemon too.
        library("LifelineReport", ["LifelineCore", "LifelinePlatform", "LifelineFormats"]),
        library("LifelineConfig", ["LifelineCore", "LifelinePlatform"]),
        // TOMLKit (and the Foundation it brings) in the process: lifeline-cli, tests, fuzzing; never the daemon.
        library("LifelineTOML", ["LifelineCore", "LifelineConfig", .product(name: "TOMLKit", package: "TOMLKit")]),
        // Network primitives shared by the monitors and the CLI: netlink (links, routes,
        // neighbours, rules, tunnels), the HTTP client (its own for plain http, libcurl
        // for the rest), the check of a reply, and `diagnose`'s walk through the layers.
        library("LifelineNet", ["LifelineCore", "LifelinePlatform", "CNetlink", "CCurl", "CEpoll"]),
        // One GLib main loop on its own thread, shared by libdbus's connections (libnotify and the tray run their own).
        library("LifelineGLib", ["CGLib"]),
        // The thin libdbus wrapper (no raw pointer leaves it), and the org.lifeline.Lifeline1 contract its clients share.
        library("LifelineDBus", ["CDBus", "CGLib", "LifelineGLib", "LifelineCore", "LifelinePlatform"]),
        // The daemon's own services, which run whatever the config lists: the name
        // and object on the session bus (its single-instance lock) and the state file.
        library("LifelineServices", ["LifelineCore", "LifelinePlatform", "LifelineFormats", "LifelineDBus", "LifelineGLib", logging, lifecycle]),
    ] + plugins + [
        // The daemon: config loading, the plugin registry (the one place naming the
        // plugins), the supervisor and the services, on swift-service-lifecycle.
        library("LifelineDaemon", [
            "LifelineCore", "LifelinePlatform", "LifelineConfig", "LifelineFormats", "LifelineServices", logging, lifecycle,
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ] + pluginDependencies),

        // `lifeline daemon`, exec'd by the front binary: no Foundation, TOMLKit or ArgumentParser.
        .executableTarget(
            name: "lifeline-daemon",
            dependencies: ["LifelineCore", "LifelinePlatform", "LifelineExecutor", "LifelineDaemon", logging],
            exclude: ["link"], swiftSettings: strict, linkerSettings: linkFlags(from: "LIFELINE_DAEMON_LINK")
        ),
        // Every other command. `wait-online` and `run` look once themselves when no daemon
        // runs (the netlink and probe monitors' one look); `diagnose` walks the layers.
        .executableTarget(
            name: "lifeline-cli",
            dependencies: [
                "LifelineCore", "LifelinePlatform", "LifelineConfig", "LifelineFormats", "LifelineDaemon", "LifelineDBus",
                "LifelineTOML", "LifelineReport", "LifelineNet", "NetlinkMonitor", "ProbeMonitor", logging,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // The front binary: `status` from the state file, `daemon` by exec of lifeline-daemon, the rest of lifeline-cli.
        // It does not name those two as dependencies: SwiftPM would then pass their libraries' link
        // flags (libnotify, GLib, D-Bus, Foundation) to this lean binary too. In a build folder
        // `SiblingProgram` has `swift run` build the one it needs.
        .executableTarget(
            name: "lifeline", dependencies: ["LifelineCore", "LifelinePlatform", "LifelineFormats"],
            swiftSettings: strict, linkerSettings: linkFlags(from: "LIFELINE_FRONT_LINK")
        ),

        library("LifelineTestKit", ["LifelineCore", "CProcess"]),
        // The throughput and D-Bus call benchmarks (the bus on the daemon's executor), and a quality sample's cost.
        .executableTarget(
            name: "lifeline-bench",
            dependencies: [
                "LifelineCore", "LifelinePlatform", "LifelineExecutor", "LifelineDaemon", "LifelineDBus",
                "LifelineConfig", "LifelineServices", "LifelineNet", logging,
            ],
            swiftSettings: strict
        ),
        // libFuzzer targets (fuzz/run.sh builds them with -sanitize=fuzzer and -DFUZZING). A
        // plain build makes each a replayer of files (FuzzReplay), so every `swift build`
        // compiles them against the code as it is, and a test replays the seeds.
        .target(name: "FuzzReplay", path: "fuzz/Replay", swiftSettings: strict),
        // The rtnetlink parser, the route model, RA options and sock_diag.
        .executableTarget(
            name: "lifeline-fuzz-netlink", dependencies: ["LifelineNet", "FuzzReplay"],
            path: "fuzz/NetlinkFuzz", swiftSettings: strict
        ),
        // D-Bus messages as the daemon reads a stranger's.
        .executableTarget(
            name: "lifeline-fuzz-dbus", dependencies: ["LifelineDBus", "FuzzReplay"],
            path: "fuzz/DBusFuzz", swiftSettings: strict
        ),
        // The config loader.
        .executableTarget(
            name: "lifeline-fuzz-config", dependencies: ["LifelineConfig", "LifelineDaemon", "LifelineTOML", "FuzzReplay"],
            path: "fuzz/ConfigFuzz", swiftSettings: strict
        ),
        // The readers of other programs' text:
        // exec-monitor lines, event JSON, the HTTP client's reply reader.
        .executableTarget(
            name: "lifeline-fuzz-input", dependencies: ["ExecMonitor", "LifelineCore", "LifelineFormats", "LifelineNet", "FuzzReplay"],
            path: "fuzz/InputFuzz", swiftSettings: strict
        ),

        tests("LifelineCoreTests", [
            "LifelineCore", "LifelinePlatform", "LifelineFormats", "LifelineReport", "LifelineTestKit", clocks,
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        tests("LifelinePlatformTests", ["LifelinePlatform", "LifelineCore", "LifelineTestKit"]),
        tests("LifelineFormatsTests", ["LifelineFormats", "LifelinePlatform", "LifelineCore"]),
        tests("LifelineReportTests", ["LifelineReport", "LifelineFormats", "LifelinePlatform", "LifelineCore"]),
        tests("LifelineNetTests", ["LifelineNet", "LifelinePlatform", "LifelineCore", "LifelineTestKit", "CNetlink"]),
        tests("LifelineServicesTests", ["LifelineServices", "LifelinePlatform", "LifelineCore", logging, lifecycle]),
        tests("LifelineExecutorTests", ["LifelineExecutor", "LifelinePlatform", "LifelineCore", "LifelineTestKit", "CEpoll"]),
        tests("LifelineConfigTests", ["LifelineConfig", "LifelineDaemon", "LifelineTOML", "LifelineCore", "LifelinePlatform"]),
        tests("LifelineDaemonTests", ["LifelineDaemon", "LifelineCore", "LifelineTestKit", clocks, logging]),
        tests("LifelineDBusTests", ["LifelineDBus", "LifelineGLib", "LifelineCore"]),
        // Every plugin, each on its own.
        tests("PluginTests", [
            "LifelineCore", "LifelinePlatform", "LifelineConfig", "LifelineFormats", "LifelineNet", "LifelineServices",
            "LifelineTestKit", "LifelineTOML", "CNetlink", clocks, logging, .product(name: "InMemoryLogging", package: "swift-log"),
        ] + pluginDependencies),
        // The built programs, run against real servers, buses and network namespaces.
        tests("IntegrationTests", [
            "lifeline", "lifeline-cli", "lifeline-daemon", "LifelineCore", "LifelinePlatform", "LifelineConfig",
            "LifelineDaemon", "LifelineDBus", "LifelineGLib", "LifelineNet", "LifelineServices", "LifelineExecutor",
            "NetlinkMonitor", "LifelineTestKit", "CNetlink", logging,
        ], exclude: ["Resources"]),  // the probe tests' check servers (Python)
    ]
)
