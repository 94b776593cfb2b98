import Foundation
import Testing

/// What people read comes in their language (`LANGUAGE`), from the catalogs of
/// po/; what programs read (JSON, the event log, templates) stays English.
@Suite(.serialized) struct TranslatedSurfacesTests {
    struct Expected: Sendable, CustomStringConvertible {
        var language: String
        /// A font that has the script, for dunst to draw it with.
        var fontLanguage: String
        var offline: String
        /// What the user's own monitor script says, in their language: shown as written.
        var scriptReason: String
        var limited: String
        var limitedBody: String
        var labels: [String]
        var backOnline: String
        var description: String { language }
    }

    static let toasts = [
        Expected(language: "ko", fontLanguage: "ko", offline: "오프라인", scriptReason: "랜선이 빠졌습니다",
                 limited: "연결됨, 인터넷 없음", limitedBody: "wlan0 네트워크가 인터넷에 연결되지 않습니다. ",
                 labels: ["1시간 동안 알림 끄기", "지금 확인"], backOnline: "다시 온라인"),
        Expected(language: "fa", fontLanguage: "fa", offline: "برون‌خط", scriptReason: "کابل شبکه جدا شده است",
                 limited: "متصل، ولی بدون اینترنت", limitedBody: "شبکهٔ wlan0 به اینترنت دسترسی ندارد. ",
                 labels: ["بررسی دوباره", "بی‌صدا به مدت ۱ ساعت"], backOnline: "دوباره برخط"),
    ]

    /// The toast the notification server receives (dbus-monitor on a private bus)
    /// and the one dunst draws (a screenshot kept under artifacts/).
    @Test(.requires(.tools(Desktop.tools + ["msgfmt", "fc-list"])), arguments: toasts) func theToastSpeaksTheUsersLanguage(_ expected: Expected) async throws {
        let fonts = try Harness.run(["fc-list", ":lang=\(expected.fontLanguage)", "family"]).stdout
        guard !fonts.isEmpty || !Harness.integrationRequired else {
            Issue.record("no font for \(expected.fontLanguage): install the fonts in the Makefile's TEST_PACKAGES")
            return
        }
        let desktop = try Desktop()
        let box = try DaemonFixture()
        let dunst = try await desktop.startDunst(font: "Sans 10", configFolder: box.path("dunst"))
        defer { _ = dunst.stop() }
        let catalogs = try Catalogs(in: box.path("catalogs"))
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment.merging(catalogs.environment(expected.language)) { $1 })
        defer { fixture.stopNow() }
        let net = ScriptedNetwork(fixture: fixture)
        try fixture.writeConfig(net.config(debounceMs: 200, sinks: "[[sink]]\nkind = \"libnotify\"\n[[sink]]\nkind = \"log\""))
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        defer { monitor.stop() }
        await Desktop.waitUntilMonitoring(monitor)
        try fixture.start()

        try net.say("online", interface: "wlan0")
        await fixture.waitForLogged(["online"])
        try net.say("offline", interface: "wlan0", reason: expected.scriptReason)
        await Harness.waitUntil("offline toast") {
            NotificationCalls(monitor.output).notifies.count == 1 && desktop.displayedCount() == 1
        }
        let toast = try #require(NotificationCalls(monitor.output).notifies.first)
        #expect(toast.summary == expected.offline)
        #expect(toast.body == expected.scriptReason + ".")
        #expect(toast.actionLabels.sorted() == expected.labels.sorted())
        // The log is for programs: English, as ever.
        await fixture.waitForLogged(["online", "offline"])
        #expect(fixture.loggedEvents().last?["reason"] as? String == expected.scriptReason)

        let shot = try desktop.screenshot(named: "toast-\(expected.language).png")
        let colours = try Harness.run(["identify", "-format", "%k", shot.path]).stdout
        #expect((Int(colours) ?? 0) > 2, "the screenshot is blank (\(colours) colours)")

        // The sentence of our own about a limited network, around a reason we cannot translate.
        try net.say("limited", interface: "wlan0", reason: "probe to http://check.test/ timed out after 5s")
        await Harness.waitUntil("limited toast") { NotificationCalls(monitor.output).notifies.count == 2 }
        let limited = try #require(NotificationCalls(monitor.output).notifies.last)
        #expect(limited.summary == expected.limited)
        #expect(limited.body == expected.limitedBody + "probe to check.test timed out after 5s.")

        try net.say("online", interface: "wlan0")
        await Harness.waitUntil("back online") { NotificationCalls(monitor.output).notifies.count == 3 }
        let back = try #require(NotificationCalls(monitor.output).notifies.last)
        #expect(back.summary == expected.backOnline)
        #expect(await fixture.stop() == 0)
    }

    func stateRecord(since: Int64) -> String {
        #"{"state":"limited","previous":"online","since":\#(since),"interface":"wlan0","kind":"wifi","reason":"DNS (10.0.0.1) did not answer for nmcheck.gnome.org within 5s","rtt_ms":-1,"metered":false,"sequence":3,"connection":"","diagnosis":"dns","families":{"ipv4":"limited"},"pid":\#(getpid()),"muted_until":0}"#
    }

    /// `status` (the front binary's fast path) and `watch`: the sentence in the
    /// user's language, JSON and templates as programs expect them.
    @Test(.requires(.tools(["msgfmt"]))) func statusAndWatchSpeakTheUsersLanguage() async throws {
        let box = try DaemonFixture()
        let catalogs = try Catalogs(in: box.path("catalogs"))
        let korean = try DaemonFixture(extraEnvironment: catalogs.environment("ko"))
        try FileManager.default.createDirectory(atPath: korean.path("run/lifeline"), withIntermediateDirectories: true)
        let since = Int64(Date().timeIntervalSince1970 * 1_000_000) - 125_000_000
        try stateRecord(since: since).write(toFile: korean.stateFilePath, atomically: true, encoding: .utf8)

        let status = try korean.cli(["status"])
        #expect(status.status == 1)
        #expect(status.stdout.hasPrefix("wlan0 (Wi-Fi)에서 인터넷 없음, 2분 "), "\(status.stdout)")
        #expect(status.stdout.hasSuffix("초째: DNS 서버가 응답하지 않습니다\n"), "\(status.stdout)")

        let json = try korean.cli(["status", "--json"]).stdout
        #expect(json.contains(#""state":"limited""#) && json.contains("did not answer for nmcheck.gnome.org"), "\(json)")
        #expect(try korean.cli(["status", "--format", "{state} {kind}"]).stdout == "limited wifi\n")

        // Without a catalog for the language, English, word for word.
        var english = korean.environment
        english["LANGUAGE"] = "de"
        let plain = try Harness.run([Harness.binary, "status"], environment: english).stdout
        #expect(plain.hasPrefix("limited via wlan0 (wifi) for 2m "), "\(plain)")
        #expect(plain.hasSuffix(": DNS (10.0.0.1) did not answer for nmcheck.gnome.org within 5s\n"), "\(plain)")

        // `watch` prints the line at once, then waits for a change.
        var persian = korean.environment
        persian["LANGUAGE"] = "fa"
        let watch = try BackgroundProcess([Harness.binary, "watch"], environment: persian,
                                          output: URL(fileURLWithPath: korean.path("watch.out")))
        defer { watch.stop() }
        await Harness.waitUntil("the watch line") { watch.output.hasSuffix("\n") }
        #expect(watch.output == "بدون اینترنت از طریق wlan0 (وای‌فای): کارساز DNS پاسخ نمی‌دهد\n")
    }

    /// `diagnose` in a network namespace whose check server answers: the layers'
    /// labels and the verdict in Korean, each check's detail as measured.
    @Test(.requires(.rootAnd(["ip", "python3", "msgfmt"]))) func diagnoseLabelsAreTranslated() throws {
        let lab = try ProbeLab()
        try lab.startServer(.ok)
        let box = try DaemonFixture()
        let catalogs = try Catalogs(in: box.path("catalogs"))
        var env = box.environment.merging(catalogs.environment("ko")) { $1 }
        for name in ["http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY"] { env[name] = nil }
        let r = try Harness.run(["ip", "netns", "exec", lab.namespace, Harness.binary, "diagnose",
                                 "--url", lab.checkURL, "--timeout", "2s"], environment: env)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "IPv4", "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("  ✓  인터페이스") }, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("  ✓  기본 경로") && $0.contains("default via \(lab.hostAddress)") }, "\(r.stdout)")
        #expect(lines.last == "온라인", "\(r.stdout)")
        let json = try Harness.run(["ip", "netns", "exec", lab.namespace, Harness.binary, "diagnose", "--json",
                                    "--url", lab.checkURL, "--timeout", "2s"], environment: env).stdout
        #expect(json.contains(#""layer":"route""#) && json.contains(#""state":"online""#), "\(json)")
    }

    /// Installed under a prefix, the binaries find their catalogs in `share/locale` beside them.
    @Test(.requires(.tools(["make", "install", "msgfmt"]))) func theInstalledBinaryFindsItsCatalogs() throws {
        let box = try Installation()
        let prefix = box.path("prefix")
        let installed = try box.makeInstall(prefix: prefix)
        #expect(installed.status == 0, "make install: \(installed.stderr)")
        var env = try box.lonelyEnvironment()
        env["LIFELINE_LOCALEDIR"] = nil
        env["LANGUAGE"] = "ko"
        env["LC_ALL"] = "C.UTF-8"
        try FileManager.default.createDirectory(atPath: box.path("home/run/lifeline"), withIntermediateDirectories: true)
        try stateRecord(since: 0).write(toFile: box.path("home/run/lifeline/state.json"), atomically: true, encoding: .utf8)
        let status = try Harness.run([prefix + "/bin/lifeline", "status"], environment: env)
        #expect(status.stdout.hasPrefix("wlan0 (Wi-Fi)에서 인터넷 없음, "), "\(status.stdout)\(status.stderr)")
        // lifeline-cli, two folders down (libexec/lifeline/), finds them too.
        let cli = try Harness.run([prefix + "/libexec/lifeline/lifeline-cli", "status"], environment: env)
        #expect(cli.stdout.hasPrefix("wlan0 (Wi-Fi)에서 인터넷 없음, "), "\(cli.stdout)\(cli.stderr)")
    }
}
