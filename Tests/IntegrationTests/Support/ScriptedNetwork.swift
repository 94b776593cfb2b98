import Foundation

/// Drives a daemon through an exec monitor: the monitor is `tail -F` on a file,
/// and each `say(...)` appends one JSON observation to it. The one scripted
/// monitor of the integration tests: `tail` is the process the daemon starts and
/// stops, so nothing outlives the daemon.
struct ScriptedNetwork {
    let feed: String

    init(fixture: DaemonFixture, name: String = "observations.jsonl") {
        feed = fixture.path(name)
        FileManager.default.createFile(atPath: feed, contents: nil)
    }

    /// The `[[monitor]]` entry for the daemon's config.
    var monitorTOML: String {
        """
        [[monitor]]
        kind = "exec"
        command = ["tail", "-n", "+1", "-F", "\(feed)"]
        """
    }

    /// A whole config: this monitor, both debounce windows set to `debounceMs`, and `sinks`.
    func config(debounceMs: Int, sinks: String) -> String {
        """
        [debounce]
        down = "\(debounceMs)ms"
        up = "\(debounceMs)ms"

        \(monitorTOML)

        \(sinks)
        """
    }

    func say(_ state: String, interface: String = "", reason: String = "", rtt: Double? = nil) throws {
        var fields = ["\"state\":\"\(state)\""]
        if !interface.isEmpty { fields.append("\"interface\":\"\(interface)\"") }
        if !reason.isEmpty { fields.append("\"reason\":\"\(reason)\"") }
        if let rtt { fields.append("\"rtt_ms\":\(rtt)") }
        try raw("{" + fields.joined(separator: ",") + "}")
    }

    func raw(_ line: String) throws {
        try say(line: Array((line + "\n").utf8))
    }

    /// Appends `line` (newline included) byte for byte: invalid UTF-8 and all.
    func say(line: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: feed))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line))
    }
}
