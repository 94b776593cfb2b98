// swift-tools-version:6.2
import PackageDescription

// Monitors and sinks live in Plugins/<Name>/, one target each (explicit `path:`
// because SwiftPM reserves Plugins/ for package plugins by default).
let plugins: [(name: String, extraDependencies: [Target.Dependency])] = [
    ("LogSink", ["LifelineProtocol"]),
    ("ExecMonitor", ["LifelineProtocol", "CProcess"]),
    ("ProbeMonitor", ["CCurl"]),
    ("NetlinkMonitor", ["CNetlink"]),
    ("NotifySink", ["CNotify", "LifelineGLib"]),
    ("DBusSink", ["LifelineDBus"]),
    ("TmuxSink", ["LifelineProtocol"]),
    ("LogindMonitor", ["LifelineDBus", "LifelineGLib"]),
    ("PrometheusSink", [.product(name: "Prometheus", package: "swift-prometheus")]),
    ("ExecSink", ["LifelineProtocol", "CProcess"]),
    ("NetworkManagerMonitor", ["LifelineDBus", "LifelineGLib"]),
    ("TraySink", ["CDbusmenu", "CGLib", "LifelineDBus", "LifelineGLib", "LifelineProtocol", "LifelineReport"]),
]

/// Link flags for one binary, given by `make release` in an environment variable
/// (space-separated swiftc arguments): SwiftPM's command line cannot give them to
/// one product alone, and `-Xswiftc` would change every module's compile command.
/// A plain `swift build` sets none, and its binaries work as they are.
func linkFlags(from variable: String) -> [LinkerSetting] {
    let flags = (Context.environment[variable] ?? "").split(separator: " ").map(String.init)
    return flags.isEmpty ? [] : [.unsafeFlags(flags)]
}

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
        // rtnetlink kernel headers for NetlinkMonitor: headers only, nothing to link.
        .systemLibrary(name: "CNetlink", path: "Sources/CNetlink"),
        .target(
            name: "LifelineCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        // What crosses a process boundary through files and stdout: the event JSON,
        // the state file, the event log, the status and watch formats. The front
        // binary and the CLI read these without linking any plugin.
        .target(name: "LifelineProtocol", dependencies: ["LifelineCore", "CProcess"]),
        // `history --report`, `--csv` and `--json`: the log read into a timeline, and the
        // HTML page made of it. Plain Swift: the tray writes the page in the daemon too.
        .target(name: "LifelineReport", dependencies: ["LifelineCore", "LifelineProtocol"]),
        // pidfd_open, for `watch` to see the daemon exit without polling (header only).
        .systemLibrary(name: "CProcess", path: "Sources/CProcess"),
        // C libraries through pkg-config, which gives SwiftPM the -l flags.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // One GLib main loop on its own thread, shared by libdbus and libnotify.
        .target(name: "LifelineGLib", dependencies: ["CGLib"]),
        // The thin libdbus wrapper (no raw pointer leaves it), and the org.lifeline.Lifeline1 contract its clients share.
        .target(name: "LifelineDBus", dependencies: ["CDBus", "CGLib", "LifelineGLib", "LifelineCore"]),
        .systemLibrary(name: "CNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
        // The tray icon's menu (com.canonical.dbusmenu); GIO comes through CGLib's flags.
        .systemLibrary(name: "CDbusmenu", pkgConfig: "dbusmenu-glib-0.4", providers: [.apt(["libdbusmenu-glib-dev"])]),
        .target(name: "LifelineConfig", dependencies: ["LifelineCore"]),
        // TOMLKit (and the Foundation it brings) in the process: lifeline-cli, tests, fuzzing; never the daemon.
        .target(name: "LifelineTOML", dependencies: ["LifelineConfig", .product(name: "TOMLKit", package: "TOMLKit")]),
        .target(
            name: "LifelineDaemon",
            dependencies: [
                "LifelineCore", "LifelineConfig", "LifelineProtocol",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ] + plugins.map { .target(name: $0.name) }
        ),
        // The front binary: `status` from the state file, `daemon` by exec of lifeline-daemon, the rest of lifeline-cli.
        .executableTarget(
            name: "lifeline", dependencies: ["LifelineCore", "LifelineProtocol"],
            linkerSettings: linkFlags(from: "LIFELINE_FRONT_LINK")
        ),
        // `lifeline daemon`, exec'd by the front binary: no Foundation, TOMLKit or ArgumentParser.
        .executableTarget(
            name: "lifeline-daemon", dependencies: ["LifelineCore", "LifelineDaemon"], exclude: ["link"],
            linkerSettings: linkFlags(from: "LIFELINE_DAEMON_LINK")
        ),
        .executableTarget(
            name: "lifeline-cli",
            dependencies: [
                "LifelineCore", "LifelineConfig", "LifelineProtocol", "LifelineDaemon", "LifelineDBus", "LifelineTOML",
                "LifelineReport",
                "ProbeMonitor",  // `diagnose` walks the probe's layers itself
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "LifelineTestKit", dependencies: ["LifelineCore", "CProcess"]),
        // libcurl's header (libcurl4-gnutls-dev) and the loader that opens the library when a probe first needs it.
        .target(name: "CCurl"),
        .executableTarget(
            name: "lifeline-bench",
            dependencies: ["LifelineCore", "LifelineTestKit", "LifelineDaemon", "LifelineDBus", "LifelineConfig"]
        ),
        .testTarget(
            name: "LifelineCoreTests",
            dependencies: [
                "LifelineCore", "LifelineProtocol", "LifelineReport", "LifelineTestKit",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "LifelineConfigTests", dependencies: ["LifelineConfig", "LifelineDaemon", "LifelineTOML"]),
        .testTarget(
            name: "LifelineDaemonTests",
            dependencies: [
                "LifelineDaemon", "LifelineCore", "LifelineTestKit", .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        .testTarget(
            name: "PluginTests",
            dependencies: [
                "LifelineCore", "LifelineConfig", "LifelineProtocol", "LifelineTestKit", "LifelineTOML",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ] + plugins.map { .target(name: $0.name) }
        ),
        .testTarget(
            name: "LifelineDBusTests",
            dependencies: ["LifelineDBus", "LifelineGLib", "LifelineCore"]
        ),
        // NetlinkMonitor: the poll loop is also driven directly, inside a namespace.
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["lifeline", "lifeline-cli", "lifeline-daemon", "LifelineDBus", "LifelineGLib", "NetlinkMonitor", "DBusSink", "LifelineCore", "LifelineTestKit"],
            exclude: ["Resources"]  // the probe tests' check servers (Python)
        ),
        .testTarget(name: "NotifySinkTests", dependencies: ["NotifySink", "LifelineCore", "LifelineTestKit"]),
        // libFuzzer target for the config loader (fuzz/config.sh); a plain build replays inputs.
        .executableTarget(name: "lifeline-fuzz-config", dependencies: ["LifelineConfig", "LifelineDaemon", "LifelineTOML"], path: "fuzz/ConfigFuzz"),
        // libFuzzer target for the readers of other programs' text (fuzz/input.sh): exec-monitor lines, event JSON.
        .executableTarget(name: "lifeline-fuzz-input", dependencies: ["ExecMonitor", "LifelineCore", "LifelineProtocol"], path: "fuzz/InputFuzz"),
    ] + plugins.map {
        .target(name: $0.name, dependencies: ["LifelineCore"] + $0.extraDependencies, path: "Plugins/\($0.name)")
    }
)

// One loop sets the strict settings for every target (swift-log does the same).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}

// `lifeline wait-online` and `run` look once themselves when no daemon runs:
// one route dump (netlink) and one HTTP check (probe).
package.targets.first { $0.name == "lifeline-cli" }!.dependencies += ["NetlinkMonitor"]  // ProbeMonitor: listed with the target

// The probe and `diagnose` read the default route and its router's neighbour
// entry with the netlink monitor's parser (one dump, after a failed probe).
package.targets.first { $0.name == "ProbeMonitor" }!.dependencies += ["NetlinkMonitor"]
// glibc's gettext (header only: it lives in libc), for the messages people read in their own language.
package.targets.append(.systemLibrary(name: "CIntl", path: "Sources/CIntl"))
package.targets.first { $0.name == "LifelineCore" }!.dependencies += ["CIntl", "CProcess"]
// epoll, eventfd and timerfd (headers only): the daemon's executor sleeps on them.
package.targets.append(.systemLibrary(name: "CEpoll", path: "Sources/CEpoll"))
package.targets.first { $0.name == "lifeline-daemon" }!.dependencies += ["CEpoll"]
// eventfd (header only): a wait for a descriptor outside the daemon is cut short through one.
package.targets.first { $0.name == "LifelineCore" }!.dependencies += ["CEpoll"]
// The probe's own HTTP reply reader is fuzzed with the other readers of untrusted text.
package.targets.first { $0.name == "lifeline-fuzz-input" }!.dependencies += ["ProbeMonitor"]
// eventfd (header only): a cancelled probe wakes its own client's wait at once.
package.targets.first { $0.name == "ProbeMonitor" }!.dependencies += ["CEpoll"]
// The throughput benchmark runs the bus on the daemon's executor, whose files it
// compiles through links into lifeline-daemon's folder.
package.targets.first { $0.name == "lifeline-bench" }!.dependencies += ["CEpoll"]
