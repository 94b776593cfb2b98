import Foundation
import LifelineTestKit
import Testing

/// The quality toast end to end: the daemon in the quality lab's namespace
/// reads its own uploads' sockets, 30 % loss on the way to the servers makes
/// the quality `poor`, and dunst, on a private bus the daemon reaches through
/// its socket file, shows one "Connection is poor". The moments are the lab's:
/// the loss starts after `online`, and ends once the toast is up; the toast
/// must then close itself, and the calls dunst received say it was the only one.
extension QualityLabTests {
    @Test(.requires(.rootAnd(["ip", "nft", "python3", "dbus-send"] + Desktop.tools)))
    func sustainedPoorQualityShowsOneToastThatClosesWhenItRecovers() async throws {
        let desktop = try Desktop()
        try await desktop.startNotificationServer()
        let lab = try Lab()
        let host = "10.78.0.1"
        _ = try lab.lab.startServer(.outside, arguments: ["ok", host, "8080", lab.lab.workDir.appendingPathComponent("check.log").path],
                                    name: "check")
        try lab.upload(rate: 400_000)

        let direct = ["no_proxy": "*", "http_proxy": "", "https_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        let fixture = try DaemonFixture(extraEnvironment: desktop.environment.merging(direct) { $1 })
        defer { fixture.stopNow() }
        try fixture.writeConfig(ProbeTests.config(url: "http://\(host):8080/check_network_status.txt", interval: "5s", timeout: "2s", extra: """

            [[sink]]
            kind = "libnotify"
            quality_alert = true
            quality_alert_after = "10s"
            """))
        let monitor = try NotificationCalls.watch(desktop, output: URL(fileURLWithPath: fixture.path("notify.log")))
        await Desktop.waitUntilMonitoring(monitor)
        fixture.commandPrefix = ["ip", "netns", "exec", lab.lab.namespace]
        try fixture.start()
        #expect(await fixture.waitForState("online", timeout: .seconds(20)))

        func quality() -> [String] { fixture.loggedMarks().filter { $0["mark"] as? String == "quality" }.map { "\($0)" } }
        func poorToasts() -> [NotificationCalls.Notify] {
            NotificationCalls(monitor.output).notifies.filter { $0.summary == "Connection is poor" }
        }
        // Only the uploads to the servers lose packets: the probe's own check still answers.
        let clock = ContinuousClock()
        let lossStart = clock.now
        _ = try lab.lab.filter(.outside, name: "llq_loss", rule: ["iifname", "q1", "ip", "daddr", "198.18.0.0/24",
                                                                  "numgen", "random", "mod", "100", "<", "30", "drop"])
        #expect(await Harness.waitUntil(timeout: .seconds(120), "the quality toast (quality marks: \(quality()))") {
            poorToasts().count == 1 && desktop.displayedCount() == 1
        })
        print("quality toast: shown \(lossStart.duration(to: clock.now)) after 30 % loss began")
        let toast = try #require(poorToasts().first)
        #expect(toast.body.contains("% of packets resent"), "\(toast.body)")

        // Recovery ends the episode: the toast closes itself.
        try lab.lab.deleteTable(.outside, "llq_loss")
        let healed = clock.now
        #expect(await Harness.waitUntil(timeout: .seconds(120), "the quality toast closed (quality marks: \(quality()))") {
            !NotificationCalls(monitor.output).closes.isEmpty && desktop.displayedCount() == 0
        })
        print("quality toast: closed \(healed.duration(to: clock.now)) after the loss ended")
        let calls = NotificationCalls(monitor.output)
        #expect(calls.notifies.count == 1, "one toast in all, no outage toast: \(calls.notifies.map(\.summary))")
        #expect(fixture.loggedStates().allSatisfy { $0 == "online" }, "\(fixture.loggedStates())")
    }
}
