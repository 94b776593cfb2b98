import Foundation
import LifelineTestKit
import Testing

/// `lifeline daemon` runs all day, so it is its own small program,
/// `lifeline-daemon`: no Foundation, no TOMLKit, no ArgumentParser in the
/// process; a config file is parsed by `lifeline-cli` in a child.
@Suite(.serialized) struct LeanDaemonTests {
    /// Names that only Foundation (the full one, with its ICU data) or TOMLKit
    /// bring into a process: the libraries of a dynamic build, the mangled-name
    /// prefixes of their Swift modules (`$s10Foundation…`), ICU's data symbol
    /// (`icudt…`) and toml++'s namespace (`toml::`, mangled `_ZN4toml`) in a static one.
    static let foreignLibraries = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"]
    static let foreignSymbolPrefixes = ["$s10Foundation", "$s30FoundationInternationalization", "$s7TOMLKit", "icudt", "_ZN4toml"]
    /// libcurl (either flavour) and TLS libraries that nothing else in the daemon loads.
    static let curlOnlyLibraries = ["/libcurl-gnutls.so", "/libcurl.so", "/libgnutls.so", "/libssl.so", "/libssh2.so"]

    @Test(.requires(.tools(["nm"]))) func theDaemonIsTheLeanProgramAndRunsAFileWithEverySection() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        // Not the default path: the program must take --config itself. Every
        // top-level section, so the whole file goes through the parsing child.
        let config = f.path("elsewhere.toml")
        try """
            [debounce]
            down = "300ms"
            up = "200ms"

            \(net.monitorTOML)

            [[sink]]
            kind = "log"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        try f.start(arguments: ["daemon", "--config", config])
        defer { f.stopNow() }

        try net.say("online", interface: "eth0", reason: "probe answered")
        await f.waitForLogged(["online"])
        #expect(f.daemonLog.contains("from \(config)"), "\(f.daemonLog)")

        let pid = try #require(f.process?.pid)
        // The front binary replaced itself (same pid) with the daemon program.
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(URL(fileURLWithPath: executable).lastPathComponent == "lifeline-daemon", "the daemon runs \(executable)")

        // Through cat: String(contentsOfFile:) returns only the first read of a /proc file.
        let maps = try Harness.run(["cat", "/proc/\(pid)/maps"]).stdout
        #expect(maps.contains("/libc.so"), "the maps read lists no libc: \(maps.count) bytes")
        let mapped = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init) })
        let foreignMapped = mapped.filter { path in Self.foreignLibraries.contains { path.hasSuffix("/" + $0) } }
        #expect(foreignMapped.isEmpty, "the daemon maps \(foreignMapped.sorted())")
        // No probe here: libcurl is loaded by the first transfer that needs one, so this
        // daemon maps neither it nor the TLS libraries only it brings.
        let curl = mapped.filter { path in Self.curlOnlyLibraries.contains { path.contains($0) } }
        #expect(curl.isEmpty, "the daemon maps \(curl.sorted()) without a probe")

        let symbols = try Harness.run(["nm", "--defined-only", executable])
        #expect(symbols.status == 0, "nm: \(symbols.stderr)")
        let names = symbols.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last }
        let foreign = names.filter { name in Self.foreignSymbolPrefixes.contains { name.hasPrefix($0) } }
        #expect(foreign.isEmpty, "the daemon defines \(foreign.count) Foundation or TOMLKit symbols, e.g. \(foreign.prefix(3))")
        #expect(names.count > 1000, "nm listed only \(names.count) symbols: nothing to check")
    }

    /// libcurl is loaded when a probe first needs it, not at start: neither program
    /// names it among the libraries ld.so loads (the debug build, and the release
    /// build when there is one).
    @Test(.requires(.tools(["readelf"]))) func theProgramsDoNotLinkLibcurl() throws {
        let debug = URL(fileURLWithPath: Harness.binary).deletingLastPathComponent()
        let release = PackagingTests.repo.appendingPathComponent(".build/release")
        var checked: [String] = []
        for folder in [debug, release] {
            for program in ["lifeline-daemon", "lifeline-cli"] {
                let path = folder.appendingPathComponent(program).path
                guard FileManager.default.isExecutableFile(atPath: path) else { continue }
                let dynamic = try Harness.run(["readelf", "--dynamic", path])
                #expect(dynamic.status == 0, "readelf \(path): \(dynamic.stderr)")
                let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
                #expect(needed.contains { $0.contains("[libc.so") }, "\(path): readelf listed no libc: \(needed)")
                let curl = needed.filter { $0.contains("libcurl") }
                #expect(curl.isEmpty, "\(path) needs \(curl)")
                checked.append(path)
            }
        }
        #expect(checked.count >= 2, "checked only \(checked)")
    }

    /// The release daemon carries not even FoundationEssentials (2.6 MB of code
    /// with its collections, and a third of the resident code pages once
    /// touched). A debug build links the toolchain's shared library whenever a
    /// dependency imports it, so only the static release build can tell; `make
    /// test` builds it (the package needs it) before the tests run.
    @Test(.requires(.tools(["nm"]))) func theReleaseDaemonCarriesNoFoundationEssentials() throws {
        let path = PackagingTests.repo.appendingPathComponent(".build/release/lifeline-daemon").path
        try Harness.require(missing: FileManager.default.isExecutableFile(atPath: path) ? nil : "no release build to look into (`make release`): \(path)")
        let symbols = try Harness.run(["nm", "--defined-only", path])
        #expect(symbols.status == 0, "nm: \(symbols.stderr)")
        let names = symbols.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last }
        let essentials = names.filter { $0.hasPrefix("$s20FoundationEssentials") || $0.hasPrefix("$s22_FoundationCollections") }
        let found = essentials.count  // counted first: the list itself would fill the report
        #expect(found == 0, "the release daemon defines \(found) FoundationEssentials symbols, e.g. \(essentials.prefix(3))")
        #expect(names.count > 1000, "nm listed only \(names.count) symbols: nothing to check")
    }

    /// An https:// probe loads libcurl with its first transfer and is answered through it.
    @Test(.requires(TLSCheckServer.requirement)) func theFirstHTTPSProbeLoadsLibcurl() async throws {
        let lab = try ProbeLab()
        let server = try await TLSCheckServer(lab: lab)
        let fixture = try ProbeTests().startDaemon(lab, config: ProbeTests.config(url: server.url))
        #expect(await fixture.waitForState("online", timeout: .seconds(10)), "\(fixture.daemonLog)")
        let pid = try #require(fixture.process?.pid)
        let maps = try Harness.run(["cat", "/proc/\(pid)/maps"]).stdout
        #expect(maps.contains("/libcurl-gnutls.so"), "no libcurl-gnutls in the maps after an https probe: \(maps.count) bytes")
        // libcurl's GnuTLS flavour first: a second TLS library (OpenSSL's libssl,
        // 0.3 MB resident) would only add to GnuTLS, which comes with libcurl anyway.
        #expect(!maps.contains("/libssl.so") && !maps.contains("/libcurl.so"), "the daemon maps OpenSSL's libcurl or libssl")
        #expect(server.requests.hasPrefix("GET /check_network_status.txt"), "the server read over TLS: \(server.requests)")
        #expect(await fixture.stop() == 0)
    }

    /// The release daemon's two link-time measures still hold: libstdc++ is linked
    /// statically (the daemon does not load libstdc++.so), and the hot-code order
    /// file names functions the daemon still has (the linker skips the others
    /// silently: a stale list would just pack less).
    @Test(.requires(.tools(["readelf", "nm"]))) func theReleaseDaemonsLinkMeasuresHold() throws {
        let path = PackagingTests.repo.appendingPathComponent(".build/release/lifeline-daemon").path
        try Harness.require(missing: FileManager.default.isExecutableFile(atPath: path) ? nil : "no release build to look into (`make release`): \(path)")
        let dynamic = try Harness.run(["readelf", "--dynamic", path])
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("[libc.so") }, "readelf listed no libc: \(needed)")
        #expect(!needed.contains { $0.contains("libstdc++") }, "the release daemon loads libstdc++.so (built without `make release`?): \(needed)")

        let order = try String(contentsOf: PackagingTests.repo.appendingPathComponent("Sources/lifeline-daemon/link/hot-code.order"), encoding: .utf8)
        let wanted = Set(order.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        let defined = Set(try Harness.run(["nm", "--defined-only", path]).stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        let found = wanted.intersection(defined).count
        #expect(wanted.count > 500 && found * 10 >= wanted.count * 9,
                "hot-code.order: only \(found) of its \(wanted.count) names are in the daemon; rewrite it with scripts/hot-code-order.sh")
    }

    /// `lifeline-cli daemon`, run directly (by a script, an old unit), hands over
    /// to the small program as well: `--config=FILE`, which it always takes.
    @Test func theFullCLIHandsTheDaemonOver() async throws {
        let f = try DaemonFixture()
        let net = ScriptedNetwork(fixture: f)
        let config = f.path("elsewhere.toml")
        try "\(net.monitorTOML)\n[[sink]]\nkind = \"log\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let cli = URL(fileURLWithPath: Harness.binary).deletingLastPathComponent().appendingPathComponent("lifeline-cli").path
        let daemon = try Spawned([cli, "daemon", "--config", config], environment: f.environment,
                                 stdout: .file(f.path("cli-daemon.log")), stderr: .stdout)
        defer { _ = daemon.stop() }
        try net.say("online", interface: "eth0", reason: "probe answered")
        await f.waitForLogged(["online"])
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/exe")
        #expect(URL(fileURLWithPath: executable).lastPathComponent == "lifeline-daemon", "the daemon runs \(executable)")
    }

    /// What the small program does not understand, the full CLI answers, as for
    /// every other command: help, and option errors with the usage.
    @Test func helpAndMistakesAreTheFullCLIs() throws {
        let f = try DaemonFixture()
        let help = try f.cli(["daemon", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("--config <config>") && help.stdout.contains("SIGHUP reloads"), "\(help.stdout)")

        let wrong = try f.cli(["daemon", "--bogus"])
        #expect(wrong.status == 64, "\(wrong)")
        #expect(wrong.stderr.contains("Unknown option '--bogus'"), "\(wrong.stderr)")
    }

    /// A file the parser cannot read stops the daemon with exit 2 and a message
    /// naming file and line, from the child's answer.
    @Test func aBadFileIsReportedWithItsLine() async throws {
        let f = try DaemonFixture()
        try f.writeConfig("[debounce]\ndown = \"2s\"\nup = \n")
        try f.start()
        let process = try #require(f.process)
        await Harness.waitUntil("the daemon to exit") { !process.isRunning }
        #expect(process.exitStatus == 2, "\(f.daemonLog)")
        #expect(f.daemonLog.contains("config.toml:3"), "\(f.daemonLog)")
    }
}
