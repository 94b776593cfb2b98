import Foundation
import LifelineTestKit
import Testing

/// A real NetworkManager as a test peer, fully isolated (`Resources/nm_lab.sh`):
/// its own network namespace whose one veth leads to a second namespace with the
/// check server (10.88.1.1:8088), its own system bus on a socket file, and
/// private copies of every folder it writes. The machine's own NetworkManager,
/// if any, is never started, stopped or reconfigured.
final class NetworkManagerLab: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Resources/nm_lab.sh").standardized.path
    static let requirement = Harness.Requirement.rootAnd(
        ["ip", "nft", "unshare", "dbus-daemon", "python3", "NetworkManager", "nmcli"])
    static let checkURL = "http://10.88.1.1:8088/check.txt"

    let tag: String
    let directory: String

    init() throws {
        // Interface names hold 15 bytes: "llnm" + 8.
        tag = String(UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(8))
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-nmlab-\(tag)").path
        try lab("up")
    }

    /// The namespace NetworkManager (and the daemon under test) run in.
    var namespace: String { "llnm-\(tag)" }
    /// The one interface NetworkManager manages there.
    var interface: String { "llnm\(tag)" }
    var busAddress: String { "unix:path=\(directory)/run/dbus/system_bus_socket" }
    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": busAddress] }

    func startNetworkManager() throws { try lab("nm-start") }
    func stopNetworkManager() throws { try lab("nm-stop") }
    func blockCheckServer() throws { try lab("block") }
    func unblockCheckServer() throws { try lab("unblock") }
    func carrier(_ on: Bool) throws { try lab("carrier", on ? "on" : "off") }

    /// `nmcli ARGS` against this NetworkManager; its standard output.
    @discardableResult
    func nmcli(_ arguments: String...) throws -> String {
        let r = try Harness.run(["nmcli"] + arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        if r.status != 0 { Issue.record("nmcli \(arguments) failed: \(r.stderr)") }
        return r.stdout
    }

    /// NetworkManager's `STATE:CONNECTIVITY` as nmcli reads them ("connected:full"), "" when it does not answer.
    var generalState: String {
        let r = try? Harness.run(["nmcli", "-t", "-f", "STATE,CONNECTIVITY", "general"],
                                 environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        return r?.status == 0 ? r!.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : ""
    }

    /// What NetworkManager logged (for failure messages).
    var log: String { (try? String(contentsOfFile: directory + "/nm.log", encoding: .utf8)) ?? "" }

    private func lab(_ command: String, _ extra: String...) throws {
        let r = try Harness.run([Self.script, command, tag, directory] + extra)
        if r.status != 0 { Issue.record("nm_lab.sh \(command) failed: \(r.stderr)") }
    }

    deinit {
        _ = try? Harness.run([Self.script, "down", tag, directory])
        try? FileManager.default.removeItem(atPath: directory)
    }
}
