import Foundation
import LifelineTestKit
import Testing

/// What a user and a distribution packager touch: `make install` and
/// `make uninstall`, the `.deb`, and D-Bus activation of the installed daemon.
@Suite(.serialized) struct InstallTests {
    @Test(.requires(.tools(["make", "install"]))) func installPutsEveryFileInPlaceAndUninstallLeavesNothing() throws {
        let box = try Installation()
        let root = box.path("root")
        let installed = try box.makeInstall(prefix: "/usr/local", destdir: root)
        #expect(installed.status == 0, "make install: \(installed.stderr)")

        let manifest = try Installation.manifest(prefix: "/usr/local")
        #expect(manifest.contains("/usr/local/bin/lifeline"))
        #expect(manifest.contains("/usr/local/libexec/lifeline/lifeline-cli"))
        for language in ["ko", "fa"] {
            #expect(manifest.contains("/usr/local/share/locale/\(language)/LC_MESSAGES/lifeline.mo"))
        }
        #expect(manifest.contains("/usr/local/libexec/lifeline/lifeline-daemon"))
        #expect(manifest.contains(Installation.gioModuleFolder(prefix: "/usr/local") + "/liblifeline-gio.so"))
        // Nothing is installed that uninstall does not know about.
        #expect(Installation.files(under: root) == manifest.map { String($0.dropFirst()) }.sorted())

        // The unit and the activation file start the binary where it was installed.
        let unit = try String(contentsOfFile: root + "/usr/local/lib/systemd/user/lifeline.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/lifeline daemon\n"))
        let service = try String(contentsOfFile: root + "/usr/local/share/dbus-1/services/org.lifeline.Lifeline1.service", encoding: .utf8)
        #expect(service.contains("\nExec=/usr/local/bin/lifeline daemon\n"))
        #expect(service.contains("\nSystemdService=lifeline.service\n"))

        let removed = try Installation.make("uninstall", ["PREFIX": "/usr/local", "DESTDIR": root,
                                                          "GIO_MODULE_DIR": Installation.gioModuleFolder(prefix: "/usr/local")])
        #expect(removed.status == 0, "make uninstall: \(removed.stderr)")
        #expect(Installation.files(under: root) == [])
        #expect(Installation.folders(under: root).filter { $0.contains("lifeline") } == [])
    }

    /// Installed live (no staging root), the GIO module is in GIO's cache of its
    /// folder at once, and uninstalled it is no longer.
    @Test(.requires(.tools(["make", "install", "gio-querymodules"]))) func aLiveInstallRefreshesGIOsModuleCache() throws {
        let box = try Installation()
        let prefix = box.path("prefix")
        #expect(try box.makeInstall(prefix: prefix).status == 0)
        let cache = Installation.gioModuleFolder(prefix: prefix) + "/giomodule.cache"
        let listed = (try? String(contentsOfFile: cache, encoding: .utf8)) ?? ""
        #expect(listed.contains("liblifeline-gio.so: gio-network-monitor"), "\(listed)")
        let removed = try Installation.make("uninstall", ["PREFIX": prefix, "GIO_MODULE_DIR": Installation.gioModuleFolder(prefix: prefix)])
        #expect(removed.status == 0, "make uninstall: \(removed.stderr)")
        let after = (try? String(contentsOfFile: cache, encoding: .utf8)) ?? ""
        #expect(!after.contains("liblifeline-gio.so"), "\(after)")
    }

    /// The example config is every key the daemon runs with, at its default: commented
    /// out it changes nothing, and uncommented it is exactly the built-in configuration.
    @Test(.requires(.tools(["make", "install"]))) func theExampleConfigIsTheDefaultsCommentedOut() throws {
        let box = try Installation()
        let prefix = box.path("prefix")
        #expect(try box.makeInstall(prefix: prefix).status == 0)
        let example = prefix + "/share/doc/lifeline/config.example.toml"
        let env = try box.lonelyEnvironment()
        let lifeline = prefix + "/bin/lifeline"

        let checked = try Harness.run([lifeline, "config", "check", example], environment: env)
        #expect(checked.status == 0, "\(checked.stderr)")

        let text = try String(contentsOfFile: example, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            let rest = line.dropFirst(2)
            let isSetting = line.hasPrefix("# ") && (rest.hasPrefix("[") || rest.contains(" = "))
            return isSetting ? rest : line
        }.joined(separator: "\n")
        let uncommentedPath = box.path("uncommented.toml")
        try uncommented.write(toFile: uncommentedPath, atomically: true, encoding: .utf8)
        let shownFromFile = try Harness.run([lifeline, "config", "show", "--config", uncommentedPath], environment: env)
        #expect(shownFromFile.status == 0, "\(shownFromFile.stderr)")
        let shownDefaults = try Harness.run([lifeline, "config", "show"], environment: env)
        func settings(_ toml: String) -> [Substring] { toml.split(separator: "\n").filter { !$0.hasPrefix("#") } }
        #expect(settings(shownFromFile.stdout) == settings(shownDefaults.stdout))
        #expect(settings(shownDefaults.stdout).count > 10)
    }

    /// With the daemon not running, a client calling the service starts it
    /// through the installed activation file and gets its answer.
    @Test(.requires(.tools(["make", "install", "dbus-daemon", "gdbus"]))) func callingTheServiceStartsTheInstalledDaemon() async throws {
        let box = try Installation()
        let prefix = box.path("prefix")
        #expect(try box.makeInstall(prefix: prefix).status == 0)
        var env = try box.lonelyEnvironment()
        // No probe leaves the machine and no tmux server of the user is touched.
        try FileManager.default.createDirectory(atPath: box.path("home/config/lifeline"), withIntermediateDirectories: true)
        try """
            [[monitor]]
            kind = "netlink"

            [[sink]]
            kind = "log"
            """.write(toFile: box.path("home/config/lifeline/config.toml"), atomically: true, encoding: .utf8)
        env["TMUX_TMPDIR"] = box.path("home/run")
        let bus = try ActivatingBus(serviceFolder: prefix + "/share/dbus-1/services", folder: box.folder, environment: env)
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address

        let answer = try Harness.run(["gdbus", "call", "--session", "--timeout", "20", "--dest", "org.lifeline.Lifeline1",
                                      "--object-path", "/org/lifeline/Lifeline1", "--method", "org.lifeline.Lifeline1.GetStatus"],
                                     environment: env)
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(answer.stdout.contains("'state': <'"), "\(answer.stdout)")

        // The daemon that answered is the installed binary, started by the bus.
        let owner = try Harness.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                     "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.lifeline.Lifeline1"],
                                    environment: env)
        // "(uint32 1234,)"
        let pid = owner.stdout.split(separator: " ").last.flatMap { pid_t($0.prefix { $0.isNumber }) } ?? 0
        #expect(pid > 0, "\(owner)")
        guard pid > 0 else { return }
        defer { kill(pid, SIGKILL) }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
        #expect(executable == prefix + "/libexec/lifeline/lifeline-daemon", "the activated process runs \(executable)")
        kill(pid, SIGTERM)
        await Harness.waitUntil("the activated daemon to exit") { Self.isGone(pid) }
    }

    /// The package as a distribution ships it, unpacked into a fresh root.
    @Test(.requires(.tools(["dpkg", "dpkg-deb", "lintian", "man", "bash", "zsh", "fish"]))) func thePackageUnpackedIntoAFreshRootRuns() throws {
        let built = Installation.builtPackage()
        try Harness.require(missing: built == nil ? "no package in .build/deb: `make test` builds it with `make deb` first" : nil)
        guard let deb = built else { return }
        let box = try Installation()
        let root = box.path("root")
        #expect(try Harness.run(["dpkg", "-x", deb, root]).status == 0)
        let env = try box.lonelyEnvironment()
        let lifeline = root + "/usr/bin/lifeline"

        let version = try Harness.run([lifeline, "--version"], environment: env)
        #expect(version.status == 0, "\(version.stderr)")
        let packaged = try Harness.run(["dpkg-deb", "--field", deb, "Version", "Depends"]).stdout
        #expect(!version.stdout.isEmpty && packaged.contains("Version: \(version.stdout)"))
        // Derived from the binaries: versioned, and naming the C libraries they link; and
        // libcurl's package, which the probe loads at run time (no binary names it).
        for library in ["libc6 (>= ", "libcurl3-gnutls", "libdbus-1-3", "libglib2.0-0", "libnotify4"] {
            #expect(packaged.contains(library), "Depends lacks \(library): \(packaged)")
        }

        let example = root + "/usr/share/doc/lifeline/config.example.toml"
        let checked = try Harness.run([lifeline, "config", "check", example], environment: env)
        #expect(checked.status == 0, "\(checked.stderr)")

        let status = try Harness.run([lifeline, "status"], environment: env)
        #expect(status.status == 3)
        #expect(status.stdout.isEmpty)
        #expect(status.stderr.contains("systemctl --user enable --now lifeline"), "\(status.stderr)")

        for language in ["ko", "fa"] {
            let catalog = root + "/usr/share/locale/\(language)/LC_MESSAGES/lifeline.mo"
            #expect(FileManager.default.fileExists(atPath: catalog), "no \(catalog)")
        }
        for file in ["copyright", "changelog.gz"] {
            #expect(FileManager.default.fileExists(atPath: root + "/usr/share/doc/lifeline/" + file), "no \(file)")
        }
        let lint = try Harness.run(["lintian", "--fail-on", "error,warning", "--no-tag-display-limit", deb])
        #expect(lint.status == 0 && lint.stdout.isEmpty, "lintian:\n\(lint.stdout)\(lint.stderr)")

        for page in ["man1/lifeline.1.gz", "man5/lifeline.5.gz"] {
            var manEnv = env
            manEnv["MANWIDTH"] = "80"
            let shown = try Harness.run(["man", "--warnings", "-l", root + "/usr/share/man/" + page], environment: manEnv)
            #expect(shown.status == 0 && shown.stderr.isEmpty, "\(page): \(shown.stderr)")
            #expect(shown.stdout.contains("lifeline"))
        }

        try expectCompletionsLoad(root: root, usr: root + "/usr", zshFolder: root + "/usr/share/zsh/vendor-completions", env: env)
    }

    /// The user unit as installed passes systemd's own check, its ExecStart and
    /// its Documentation= pages included.
    @Test(.requires(.tools(["make", "install", "systemd-analyze", "man"]))) func theInstalledUnitPassesSystemdAnalyzeVerify() throws {
        let box = try Installation()
        let prefix = box.path("prefix")
        #expect(try box.makeInstall(prefix: prefix).status == 0)
        var env = try box.lonelyEnvironment()  // systemd-analyze --user needs a runtime folder
        env["MANPATH"] = prefix + "/share/man"
        let verified = try Harness.run(["systemd-analyze", "--user", "verify", prefix + "/lib/systemd/user/lifeline.service"], environment: env)
        // systemd loads every user unit installed on the machine, and other
        // packages' complaints are theirs: mako's and swaync's units claim the
        // notification bus name that dunst's also claims ("Two services
        // allocated for the same bus name"). Only what names our unit counts.
        let ours = verified.stderr.split(separator: "\n").filter { $0.contains("lifeline") }
        #expect(verified.status == 0 && ours.isEmpty, "\(verified.stderr)")
    }

    /// Each shell finds the completion file where it was installed and completes a subcommand.
    func expectCompletionsLoad(root: String, usr: String, zshFolder: String, env environment: [String: String]) throws {
        // fish loads a command's completions only for a command it finds on PATH.
        var env = environment
        env["PATH"] = usr + "/bin:" + (env["PATH"] ?? "/usr/bin:/bin")
        let bashFile = usr + "/share/bash-completion/completions/lifeline"
        let bash = try Harness.run(["bash", "--norc", "-c", """
            source /usr/share/bash-completion/bash_completion
            source '\(bashFile)'
            COMP_WORDS=(lifeline sta); COMP_CWORD=1; COMP_LINE='lifeline sta'; COMP_POINT=${#COMP_LINE}
            _lifeline lifeline sta lifeline
            printf '%s\\n' "${COMPREPLY[@]}"
            """], environment: env)
        #expect(bash.status == 0 && bash.stdout == "status\n", "bash: \(bash)")

        var zshEnv = env
        zshEnv["ZDOTDIR"] = root
        let zsh = try Harness.run(["zsh", "-f", "-c", """
            fpath=('\(zshFolder)' $fpath)
            autoload -Uz compinit && compinit -u -d '\(root)/zcompdump'
            autoload +X _lifeline && print -r -- $_comps[lifeline]
            """], environment: zshEnv)
        #expect(zsh.status == 0 && zsh.stdout == "_lifeline\n" && zsh.stderr.isEmpty, "zsh: \(zsh)")

        let fish = try Harness.run(["fish", "--no-config", "-c", """
            set -p fish_complete_path '\(usr)/share/fish/vendor_completions.d'
            complete -C 'lifeline sta'
            """], environment: env)
        #expect(fish.status == 0 && fish.stdout.hasPrefix("status\t"), "fish: \(fish)")
    }

    static func isGone(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // A zombie waits only for the bus to reap it.
        return stat.split(separator: ")").last?.dropFirst().hasPrefix("Z") == true
    }
}
