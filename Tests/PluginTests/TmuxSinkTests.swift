import Foundation
import LifelineCore
import Testing
@testable import TmuxSink

struct TmuxTextTests {
    let now: Int64 = 1_700_000_000_000_000

    func event(_ state: ConnectivityState, interface: String = "wlan0", reason: String = "") -> StateEvent {
        StateEvent(state: state, previous: .unknown, since: now, interface: interface, reason: reason, sequence: 1)
    }

    @Test func defaultIsIconAndStateInTheStateColour() {
        let template = TmuxSink.Config().format
        #expect(TmuxText.status(event(.online), template: template, colors: true, now: now) == "#[fg=green]● online#[fg=default]")
        #expect(TmuxText.status(event(.offline), template: template, colors: true, now: now) == "#[fg=red]○ offline#[fg=default]")
        #expect(TmuxText.status(event(.limited), template: template, colors: true, now: now) == "#[fg=colour208]◐ limited#[fg=default]")
        #expect(TmuxText.status(event(.portal), template: template, colors: true, now: now) == "#[fg=yellow]◍ portal#[fg=default]")
        #expect(TmuxText.status(event(.unknown), template: template, colors: true, now: now) == "#[fg=default]◌ unknown#[fg=default]")
    }

    @Test func coloursOff() {
        #expect(TmuxText.status(event(.offline), template: "{icon} {state}", colors: false, now: now) == "○ offline")
    }

    @Test func valuesAreLiteralTemplateStylesAreKept() {
        let e = event(.limited, interface: "e#[fg=blue]th0", reason: "probe said #(reboot)\nnow")
        let text = TmuxText.status(e, template: "#[bold]{interface}#[nobold] {reason}", colors: false, now: now)
        #expect(text == "#[bold]e##[fg=blue]th0#[nobold] probe said ##(reboot) now")
    }

    @Test func aTrailingSemicolonSurvivesTmuxArgumentParsing() {
        #expect(TmuxText.status(event(.online), template: "{state};", colors: false, now: now) == "online\\;")
        #expect(TmuxText.argument("a;b") == "a;b")
    }

    @Test func alertNamesStateInterfaceAndReasonLiterally() {
        let e = event(.offline, reason: "route #(gone)")
        #expect(TmuxText.alert(e) == "Lifeline: offline (wlan0) — route ##(gone)")
        #expect(TmuxText.alert(event(.portal, interface: "")) == "Lifeline: portal")
    }
}

struct TmuxServersTests {
    @Test func socketFolderFollowsTmux() {
        #expect(TmuxServers.directory(environment: [:], uid: 1000) == "/tmp/tmux-1000")
        #expect(TmuxServers.directory(environment: ["TMUX_TMPDIR": ""], uid: 1000) == "/tmp/tmux-1000")
        #expect(TmuxServers.directory(environment: ["TMUX_TMPDIR": "/run/user/1000/"], uid: 1000) == "/run/user/1000/tmux-1000")
    }

    @Test func scanFindsSocketsOnlyAndTellsListeningFromDead() throws {
        let dir = "/tmp/lifeline-scan-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(TmuxServers.scan(dir + "/missing").isEmpty)
        _ = FileManager.default.createFile(atPath: dir + "/plain-file", contents: Data())
        let live = try UnixSocket(path: dir + "/live", listen: true)
        defer { live.close() }
        let dead = try UnixSocket(path: dir + "/dead", listen: false)
        dead.close()
        let found = TmuxServers.scan(dir)
        #expect(found.map(\.path) == [dir + "/dead", dir + "/live"])
        #expect(TmuxServers.isListening(dir + "/live"))
        #expect(!TmuxServers.isListening(dir + "/dead"))
        #expect(!TmuxServers.isListening(dir + "/missing"))
    }
}

struct TmuxConfigTests {
    @Test func decodesFromNothingAndRejectsBadValues() throws {
        let empty = try JSONDecoder().decode(TmuxSink.Config.self, from: Data("{}".utf8))
        #expect(empty == TmuxSink.Config())
        #expect(empty.format == "{icon} {state}" && empty.colors && empty.alert == .auto)
        let set = try JSONDecoder().decode(TmuxSink.Config.self, from: Data(#"{"format":"{state}","colors":false,"alert":"never","alert_duration":"2s"}"#.utf8))
        #expect(set == TmuxSink.Config(format: "{state}", colors: false, alert: .never, alertDuration: .seconds(2)))
        for bad in [#"{"alert":"sometimes"}"#, #"{"format":""}"#, #"{"alert_duration":"10ms"}"#] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONDecoder().decode(TmuxSink.Config.self, from: Data(bad.utf8)) }
        }
    }
}

/// A bound unix socket, listening or not (a dead one, as a killed tmux leaves).
final class UnixSocket {
    let fd: Int32

    init(path: String, listen shouldListen: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        if shouldListen { _ = listen(fd, 4) }
    }

    func close() { _ = Glibc.close(fd) }
}
